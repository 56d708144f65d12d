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
	for _, ic := range icons {
		img := draw(ic.size, ic.fill)
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
