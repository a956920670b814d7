package calibrate

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Content is a synthetic page content of known compressibility: each page
// is RandomBytes bytes from a seeded ChaCha8 stream (incompressible) then
// zeros, so a compressor can at best shrink it to about RandomBytes.
type Content struct {
	Name        string
	RandomBytes int // of each 4096-byte page
}

// Contents are the synthetic contents calibrate measures, from the most
// compressible to the least. "third" (a third of each page random, about
// 3:1) is the default for the tier's stored bytes.
var Contents = []Content{
	{"zero", 0},
	{"third", 4096 / 3},
	{"half", 4096 / 2},
	{"random", 4096},
}

// DefaultContent names the content whose memory use a tier file's
// StoredBytesPerPage takes when no --pid sample is given.
const DefaultContent = "third"

// ContentNames lists the synthetic contents' names.
func ContentNames() string {
	var s []string
	for _, c := range Contents {
		s = append(s, c.Name)
	}
	return strings.Join(s, ", ")
}

// contentNamed returns the synthetic content called name.
func contentNamed(name string) (Content, error) {
	for _, c := range Contents {
		if c.Name == name {
			return c, nil
		}
	}
	return Content{}, fmt.Errorf("unknown content %q (known: %s)", name, ContentNames())
}

// fill writes c into buf, page after page of pageSize bytes, from seed.
// Every page differs (the stream does not repeat), so no two pages are
// alike for a deduplicating tier.
func (c Content) fill(buf []byte, pageSize int, seed uint64) {
	var key [32]byte
	for i := range 8 {
		key[i] = byte(seed >> (8 * i))
	}
	rng := rand.NewChaCha8(key)
	n := c.RandomBytes * pageSize / 4096
	for off := 0; off+pageSize <= len(buf); off += pageSize {
		p := buf[off : off+pageSize]
		rng.Read(p[:n])
		clear(p[n:])
	}
}
