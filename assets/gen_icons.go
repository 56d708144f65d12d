//go:build ignore

// gen_icons draws mcptray's icons: the app icon and one tray icon per
// aggregate health (green, amber, red, grey). Run: go run gen_icons.go
//
// The glyph is a disc in the status colour with three white "server" bars,
// ringed dark then light so it reads on both light and dark panels. Shapes are
// supersampled 8x and box-filtered down for clean edges at small sizes.
package main

import (
	"image"
	"image/color"
	"image/png"
	"log"
	"math"
	"os"
)

type rgba = color.NRGBA

func main() {
	icons := []struct {
		file string
		size int
		fill rgba
	}{
		{"icon.png", 512, rgba{0x1f, 0x6f, 0xd1, 0xff}},
		{"tray-ready.png", 64, rgba{0x2e, 0xa0, 0x43, 0xff}},
		{"tray-warn.png", 64, rgba{0xe3, 0x9b, 0x0c, 0xff}},
		{"tray-error.png", 64, rgba{0xd1, 0x24, 0x2f, 0xff}},
		{"tray-idle.png", 64, rgba{0x8c, 0x95, 0x9f, 0xff}},
	}
	for i, ic := range icons {
		var img image.Image = draw(ic.size, ic.fill)
		if i > 0 {
			img = forSystray(img.(*image.NRGBA))
		}
		f, err := os.Create(ic.file)
		if err != nil {
			log.Fatal(err)
		}
		if err := png.Encode(f, img); err != nil {
			log.Fatal(err)
		}
		f.Close()
	}
}

// forSystray stores a tray icon as 16-bit straight RGBA whose values survive
// the Linux tray's conversion intact. fyne.io/systray (v1.11 to v1.12.2, the
// newest) builds the StatusNotifierItem's IconPixmap from each pixel's
// premultiplied 16-bit RGBA() by keeping the low byte of every channel, where
// the host expects 8-bit straight ARGB: from an 8-bit PNG every translucent
// pixel comes out as noise (the icon's dark ring turned pink and orange).
// Here alpha is a8*257, whose low byte is a8, and each colour channel is
// the 16-bit value nearest the true colour whose premultiplied value has
// the wanted 8-bit colour as its low byte. A normal PNG reader sees the same
// colours (within 128/alpha levels, invisible at low alpha); the tray host
// sees the exact 8-bit values. app/gui's end-to-end test reads the pixmap
// back over D-Bus and compares it with the asset.
func forSystray(src *image.NRGBA) *image.NRGBA64 {
	out := image.NewNRGBA64(src.Bounds())
	for y := src.Rect.Min.Y; y < src.Rect.Max.Y; y++ {
		for x := src.Rect.Min.X; x < src.Rect.Max.X; x++ {
			p := src.NRGBAAt(x, y)
			if p.A == 0 {
				continue
			}
			a := uint32(p.A) * 0x101
			out.SetNRGBA64(x, y, color.NRGBA64{
				R: channelFor(p.R, a), G: channelFor(p.G, a), B: channelFor(p.B, a), A: uint16(a),
			})
		}
	}
	return out
}

// channelFor returns the 16-bit straight value c16 closest to c8*257 for
// which (c16*a/0xffff)&0xff == c8, the premultiplication image/color does.
func channelFor(c8 uint8, a uint32) uint16 {
	if a == 0xffff {
		return uint16(c8) * 0x101
	}
	target := float64(c8) * 0x101 * float64(a) / 0xffff // the true premultiplied value
	best, bestErr := uint16(0), math.Inf(1)
	for v := uint32(c8); v <= a; v += 256 {
		c16 := (v*0xffff + a - 1) / a // smallest straight value that premultiplies to v
		if c16 > 0xffff || c16*a/0xffff != v {
			continue
		}
		if e := math.Abs(float64(v) - target); e < bestErr {
			best, bestErr = uint16(c16), e
		}
	}
	if math.IsInf(bestErr, 1) {
		log.Fatalf("no 16-bit value for %d at alpha %d", c8, a)
	}
	return best
}

// draw renders the glyph at size×size.
func draw(size int, fill rgba) *image.NRGBA {
	const ss = 8
	n := size * ss
	c := float64(n) / 2
	r := float64(n)/2 - float64(n)*0.02
	outer := float64(n) * 0.045 // dark ring width
	inner := float64(n) * 0.035 // light ring width
	dark := rgba{0x16, 0x1b, 0x22, 0xe6}
	light := rgba{0xff, 0xff, 0xff, 0xff}
	white := rgba{0xff, 0xff, 0xff, 0xff}

	// Three rounded bars, like a server rack.
	barW, barH := float64(n)*0.46, float64(n)*0.115
	gap := float64(n) * 0.055
	top := c - (3*barH+2*gap)/2

	sample := func(x, y float64) rgba {
		d := math.Hypot(x-c, y-c)
		switch {
		case d > r:
			return rgba{}
		case d > r-outer:
			return dark
		case d > r-outer-inner:
			return light
		}
		for i := 0; i < 3; i++ {
			by := top + float64(i)*(barH+gap)
			if inRoundRect(x, y, c-barW/2, by, barW, barH, barH/2) {
				// A small dot at the bar's left end, in the fill colour,
				// like a status LED.
				if math.Hypot(x-(c-barW/2+barH*0.9), y-(by+barH/2)) < barH*0.28 {
					return fill
				}
				return white
			}
		}
		return fill
	}

	big := make([]rgba, n*n)
	for y := 0; y < n; y++ {
		for x := 0; x < n; x++ {
			big[y*n+x] = sample(float64(x)+0.5, float64(y)+0.5)
		}
	}
	out := image.NewNRGBA(image.Rect(0, 0, size, size))
	for y := 0; y < size; y++ {
		for x := 0; x < size; x++ {
			var rs, gs, bs, as float64
			for j := 0; j < ss; j++ {
				for i := 0; i < ss; i++ {
					p := big[(y*ss+j)*n+x*ss+i]
					a := float64(p.A)
					rs += float64(p.R) * a
					gs += float64(p.G) * a
					bs += float64(p.B) * a
					as += a
				}
			}
			if as == 0 {
				continue
			}
			out.SetNRGBA(x, y, rgba{uint8(rs / as), uint8(gs / as), uint8(bs / as), uint8(as / (ss * ss))})
		}
	}
	return out
}

func inRoundRect(x, y, rx, ry, w, h, rad float64) bool {
	if x < rx || x > rx+w || y < ry || y > ry+h {
		return false
	}
	cx := math.Max(rx+rad, math.Min(x, rx+w-rad))
	cy := math.Max(ry+rad, math.Min(y, ry+h-rad))
	return math.Hypot(x-cx, y-cy) <= rad
}
