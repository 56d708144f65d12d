package gui

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// appTheme is Fyne's theme with secondary text readable: low-importance
// labels (the footer, hints, counts) take the disabled colour, which in
// Fyne's default theme is 1.5:1 against the background. These greys are
// 4.5:1 or more (WCAG AA) in both variants, and still well below the
// foreground, so disabled controls keep looking disabled.
type appTheme struct{ fyne.Theme }

func (t appTheme) Color(n fyne.ThemeColorName, v fyne.ThemeVariant) color.Color {
	if n == theme.ColorNameDisabled {
		if v == theme.VariantLight {
			return color.NRGBA{0x6e, 0x6e, 0x6e, 0xff}
		}
		return color.NRGBA{0x94, 0x94, 0x94, 0xff}
	}
	return t.Theme.Color(n, v)
}
