package reader

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// Java's DataOutput.writeUTF stores a string as a 2-byte big-endian length
// followed by "modified UTF-8": UTF-16 code units encoded one by one in 1 to
// 3 bytes, with U+0000 written as the two bytes C0 80 and characters above
// U+FFFF written as two 3-byte surrogates.
//
// decodeModifiedUTF8 turns such bytes into a Go string (ordinary UTF-8) and
// encodeModifiedUTF8 does the reverse. The pair round-trips exactly: the
// decoder rejects the byte forms Java would never write (raw 00 bytes,
// over-long encodings other than C0 80), and keeps a lone surrogate, which a
// Java string may hold but UTF-8 cannot, as its 3 raw bytes (the WTF-8
// convention) so the encoder can put it back.

var errBadModifiedUTF8 = errors.New("invalid modified UTF-8")

func decodeModifiedUTF8(b []byte) (string, error) {
	ascii := true
	for _, c := range b {
		if c == 0 || c >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return string(b), nil
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c != 0 && c < 0x80:
			out = append(out, c)
			i++
		case c&0xE0 == 0xC0:
			if i+1 >= len(b) || b[i+1]&0xC0 != 0x80 {
				return "", fmt.Errorf("%w at string byte %d", errBadModifiedUTF8, i)
			}
			r := rune(c&0x1F)<<6 | rune(b[i+1]&0x3F)
			if r != 0 && r < 0x80 {
				return "", fmt.Errorf("%w: over-long form at string byte %d", errBadModifiedUTF8, i)
			}
			out = utf8.AppendRune(out, r)
			i += 2
		case c&0xF0 == 0xE0:
			if i+2 >= len(b) || b[i+1]&0xC0 != 0x80 || b[i+2]&0xC0 != 0x80 {
				return "", fmt.Errorf("%w at string byte %d", errBadModifiedUTF8, i)
			}
			u := rune(c&0x0F)<<12 | rune(b[i+1]&0x3F)<<6 | rune(b[i+2]&0x3F)
			if u < 0x800 {
				return "", fmt.Errorf("%w: over-long form at string byte %d", errBadModifiedUTF8, i)
			}
			if u >= 0xD800 && u <= 0xDBFF && i+5 < len(b) && b[i+3] == 0xED && b[i+4]&0xF0 == 0xB0 && b[i+5]&0xC0 == 0x80 {
				lo := rune(b[i+4]&0x0F)<<6 | rune(b[i+5]&0x3F) | 0xDC00
				out = utf8.AppendRune(out, 0x10000+(u-0xD800)<<10+(lo-0xDC00))
				i += 6
				continue
			}
			// Ordinary BMP character, or a lone surrogate kept as raw bytes.
			out = append(out, b[i:i+3]...)
			i += 3
		default:
			return "", fmt.Errorf("%w: byte %#02x at string byte %d", errBadModifiedUTF8, c, i)
		}
	}
	return string(out), nil
}

// encodeModifiedUTF8 appends the modified UTF-8 form of s to dst. Bytes of s
// that are neither UTF-8 nor a WTF-8 lone surrogate cannot come from a Java
// string; they are written as U+FFFD, as Java would after decoding them.
func encodeModifiedUTF8(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c != 0 && c < 0x80 {
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			if i+2 < len(s) && c == 0xED && s[i+1]&0xE0 == 0xA0 && s[i+2]&0xC0 == 0x80 {
				dst = append(dst, s[i:i+3]...)
				i += 3
				continue
			}
			r = utf8.RuneError
		}
		i += size
		switch {
		case r == 0:
			dst = append(dst, 0xC0, 0x80)
		case r < 0x800:
			dst = append(dst, 0xC0|byte(r>>6), 0x80|byte(r&0x3F))
		case r < 0x10000:
			dst = append(dst, 0xE0|byte(r>>12), 0x80|byte(r>>6&0x3F), 0x80|byte(r&0x3F))
		default:
			r -= 0x10000
			hi, lo := 0xD800+(r>>10), 0xDC00+(r&0x3FF)
			dst = append(dst, 0xE0|byte(hi>>12), 0x80|byte(hi>>6&0x3F), 0x80|byte(hi&0x3F))
			dst = append(dst, 0xE0|byte(lo>>12), 0x80|byte(lo>>6&0x3F), 0x80|byte(lo&0x3F))
		}
	}
	return dst
}

// modifiedUTF8Len is the encoded length of s, for checking the 65535-byte
// limit of writeUTF before encoding.
func modifiedUTF8Len(s string) int {
	return len(encodeModifiedUTF8(nil, s))
}
