package demoorigin

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"sync"
)

// LogoPNG returns /logo.png: a 64×64 gradient whose tEXt chunk holds the
// demo matches, so a rewriter that touched image bodies would corrupt it.
// Built on first use, not at package init: every streamsub subcommand
// links this package.
var LogoPNG = sync.OnceValue(makeLogo)

func makeLogo() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 64, 64))
	for y := range 64 {
		for x := range 64 {
			img.Set(x, y, color.RGBA{uint8(x * 4), uint8(y * 4), 128, 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err)
	}
	// Insert a tEXt chunk before IEND (the last 12 bytes).
	enc := b.Bytes()
	iend := enc[len(enc)-12:]
	out := append([]byte(nil), enc[:len(enc)-12]...)
	out = appendChunk(out, "tEXt", []byte("Comment\x00"+OriginURL+" "+OriginHost+" "+Analytics))
	return append(out, iend...)
}

// appendChunk appends a PNG chunk: length, type, data, CRC of type+data.
func appendChunk(dst []byte, typ string, data []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(data)))
	start := len(dst)
	dst = append(dst, typ...)
	dst = append(dst, data...)
	return binary.BigEndian.AppendUint32(dst, crc32.ChecksumIEEE(dst[start:]))
}
