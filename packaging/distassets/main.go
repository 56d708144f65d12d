// Command distassets makes the icons and resources the packages carry, from
// assets/icon.png: the hicolor icon theme's sizes for Linux
// (OUT/hicolor/NxN/apps/dev.mcptray.app.png), and for Windows the resources
// both .exe files carry: the icon (at the sizes Explorer and the taskbar ask
// for), the version resource (what Properties → Details shows) and the
// manifest (per-monitor DPI awareness, common controls 6). It writes
// mcptray.ico and mcptray.rc and compiles them with mingw-w64's windres into
// a .syso, which `go build` links into a Windows build of the package in its
// folder. `make dist` runs it (a before hook in .goreleaser.yaml); the MSI's
// icon is the same mcptray.ico.
package main

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/image/draw"
)

func main() {
	version := flag.String("version", "", "mcptray's version (1.2.3, 1.2.3-rc.1, 0.0.0~dev.abc1234)")
	icon := flag.String("icon", "assets/icon.png", "the app icon, a square PNG")
	out := flag.String("out", "build/assets", "folder for hicolor/, mcptray.ico, mcptray.rc and mcptray.manifest")
	syso := flag.String("syso", "rsrc_windows_amd64.syso", "the .syso to write (\"\": only the sources)")
	windres := flag.String("windres", "x86_64-w64-mingw32-windres", "mingw-w64's resource compiler")
	flag.Parse()
	if err := run(*version, *icon, *out, *syso, *windres); err != nil {
		fmt.Fprintln(os.Stderr, "distassets:", err)
		os.Exit(1)
	}
}

func run(version, iconPath, out, syso, windres string) error {
	nums, err := numeric(version)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	src, err := os.ReadFile(iconPath)
	if err != nil {
		return err
	}
	img, err := png.Decode(bytes.NewReader(src))
	if err != nil {
		return fmt.Errorf("%s: %w", iconPath, err)
	}
	for _, n := range []int{16, 22, 24, 32, 48, 64, 128, 256, 512} {
		var b bytes.Buffer
		if err := png.Encode(&b, scaled(img, n)); err != nil {
			return err
		}
		p := filepath.Join(out, "hicolor", fmt.Sprintf("%dx%d", n, n), "apps", "dev.mcptray.app.png")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	ico, err := icoFile(img, []int{16, 20, 24, 32, 40, 48, 64, 128, 256})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "mcptray.ico"), ico, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "mcptray.manifest"), []byte(manifest), 0o644); err != nil {
		return err
	}
	rc := fmt.Sprintf(rcTemplate, nums, nums, rcString(version))
	if err := os.WriteFile(filepath.Join(out, "mcptray.rc"), []byte(rc), 0o644); err != nil {
		return err
	}
	if syso == "" {
		return nil
	}
	abs, err := filepath.Abs(syso)
	if err != nil {
		return err
	}
	cmd := exec.Command(windres, "-O", "coff", "-i", "mcptray.rc", "-o", abs)
	cmd.Dir = out // the .rc names the icon and manifest relative to itself
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w\n%s", windres, err, b)
	}
	return nil
}

// numeric is the version as the four 16-bit numbers a version resource and
// an MSI take ("1,2,3,0"): the leading numbers of the release, the rest (a
// pre-release or build suffix) dropped.
func numeric(v string) (string, error) {
	base := strings.TrimPrefix(v, "v")
	if i := strings.IndexAny(base, "-~+"); i >= 0 {
		base = base[:i]
	}
	parts := strings.Split(base, ".")
	if v == "" || len(parts) > 4 {
		return "", fmt.Errorf("version %q: want MAJOR.MINOR.PATCH with an optional suffix", v)
	}
	for len(parts) < 4 {
		parts = append(parts, "0")
	}
	for _, p := range parts {
		if n, err := strconv.ParseUint(p, 10, 16); err != nil || n > 65535 {
			return "", fmt.Errorf("version %q: %q is not a number from 0 to 65535", v, p)
		}
	}
	return strings.Join(parts, ","), nil
}

// scaled is img at n×n pixels.
func scaled(img image.Image, n int) image.Image {
	if b := img.Bounds(); b.Dx() == n && b.Dy() == n {
		return img
	}
	dst := image.NewNRGBA(image.Rect(0, 0, n, n))
	draw.CatmullRom.Scale(dst, dst.Bounds(), img, img.Bounds(), draw.Src, nil)
	return dst
}

func rcString(s string) string { return strings.ReplaceAll(s, `"`, `""`) }

// icoFile is an .ico with one PNG-compressed image per size (Windows Vista
// and later read PNG entries at every size).
func icoFile(img image.Image, sizes []int) ([]byte, error) {
	var images [][]byte
	for _, n := range sizes {
		var b bytes.Buffer
		if err := png.Encode(&b, scaled(img, n)); err != nil {
			return nil, err
		}
		images = append(images, b.Bytes())
	}
	var b bytes.Buffer
	le := binary.LittleEndian
	binary.Write(&b, le, [3]uint16{0, 1, uint16(len(sizes))}) // reserved, type icon, count
	offset := 6 + 16*len(sizes)
	for i, n := range sizes {
		dim := uint8(n)
		if n >= 256 {
			dim = 0 // 0 means 256
		}
		b.Write([]byte{dim, dim, 0, 0})        // width, height, palette, reserved
		binary.Write(&b, le, [2]uint16{1, 32}) // planes, bits per pixel
		binary.Write(&b, le, [2]uint32{uint32(len(images[i])), uint32(offset)})
		offset += len(images[i])
	}
	for _, im := range images {
		b.Write(im)
	}
	return b.Bytes(), nil
}

const rcTemplate = `// Generated by packaging/winres: the icon, version and manifest of mcptray.exe and mcptray-headless.exe.
1 ICON "mcptray.ico"
1 24 "mcptray.manifest"
1 VERSIONINFO
FILEVERSION %[1]s
PRODUCTVERSION %[2]s
FILEFLAGSMASK 0x3f
FILEFLAGS 0x0
FILEOS 0x40004
FILETYPE 0x1
FILESUBTYPE 0x0
BEGIN
  BLOCK "StringFileInfo"
  BEGIN
    BLOCK "040904b0"
    BEGIN
      VALUE "CompanyName", "mcptray"
      VALUE "FileDescription", "mcptray: run and check your MCP servers"
      VALUE "FileVersion", "%[3]s"
      VALUE "InternalName", "mcptray"
      VALUE "OriginalFilename", "mcptray.exe"
      VALUE "ProductName", "mcptray"
      VALUE "ProductVersion", "%[3]s"
    END
  END
  BLOCK "VarFileInfo"
  BEGIN
    VALUE "Translation", 0x409, 1200
  END
END
`

const manifest = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<assembly xmlns="urn:schemas-microsoft-com:asm.v1" manifestVersion="1.0">
  <assemblyIdentity type="win32" name="dev.mcptray.app" version="1.0.0.0" processorArchitecture="*"/>
  <dependency>
    <dependentAssembly>
      <assemblyIdentity type="win32" name="Microsoft.Windows.Common-Controls" version="6.0.0.0" processorArchitecture="*" publicKeyToken="6595b64144ccf1df" language="*"/>
    </dependentAssembly>
  </dependency>
  <application xmlns="urn:schemas-microsoft-com:asm.v3">
    <windowsSettings>
      <dpiAware xmlns="http://schemas.microsoft.com/SMI/2005/WindowsSettings">true/pm</dpiAware>
      <dpiAwareness xmlns="http://schemas.microsoft.com/SMI/2016/WindowsSettings">permonitorv2,permonitor</dpiAwareness>
    </windowsSettings>
  </application>
  <trustInfo xmlns="urn:schemas-microsoft-com:asm.v3">
    <security>
      <requestedPrivileges>
        <requestedExecutionLevel level="asInvoker" uiAccess="false"/>
      </requestedPrivileges>
    </security>
  </trustInfo>
</assembly>
`
