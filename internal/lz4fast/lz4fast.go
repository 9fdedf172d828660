// Package lz4fast compresses LZ4 blocks exactly as liblz4's
// LZ4_compress_default does (lz4 1.9, acceleration 1), which is what
// Cassandra's LZ4Compressor calls through lz4-java's JNI binding.
//
// It is hand-written, not taken from a library, because byte-exact output
// is the point: pierrec/lz4 (used for decompression) produces valid blocks
// but chooses different matches, so a converted sstable's compressed
// Data.db, CompressionInfo.db, Digest.crc32 and compression ratio would
// differ from what Cassandra writes, and `savings` would report an LZ4
// difference as if it were a cost of the new format. Decompression stays
// with pierrec/lz4.
//
// Only blocks below 64 KiB + 11 bytes are supported: that is liblz4's
// "byU16" table layout, and Cassandra's chunks (16 KiB by default, 64 KiB
// at most in practice) always fit. Larger blocks return ErrTooLarge so the
// caller can fall back to another encoder.
package lz4fast

import (
	"encoding/binary"
	"errors"
)

const (
	minMatch     = 4
	lastLiterals = 5
	mfLimit      = 12
	minLength    = mfLimit + 1
	skipTrigger  = 6
	hashLog      = 13 // LZ4_HASHLOG (12) + 1 for the byU16 table
	mlBits       = 4
	mlMask       = 1<<mlBits - 1
	runMask      = 1<<(8-mlBits) - 1
	// limit64k is the largest input liblz4 compresses with a 16-bit table.
	limit64k = 64*1024 + mfLimit - 1
)

// ErrTooLarge reports an input that liblz4 would not compress with the
// 16-bit table this package implements.
var ErrTooLarge = errors.New("lz4fast: input of 64 KiB + 11 bytes or more")

// CompressBound is the largest block Compress can produce for n bytes.
func CompressBound(n int) int { return n + n/255 + 16 }

func hash(seq uint32) uint32 { return (seq * 2654435761) >> (32 - hashLog) }

// read32 loads 4 bytes at i. Callers keep i+4 <= len(b) (the match loop
// stops MFLIMIT bytes before the end); the explicit re-slice lets the
// compiler check bounds once and merge the byte loads into one.
func read32(b []byte, i int) uint32 {
	q := b[i : i+4 : i+4]
	return uint32(q[0]) | uint32(q[1])<<8 | uint32(q[2])<<16 | uint32(q[3])<<24
}

// Compress appends the LZ4 block of src to dst.
func Compress(dst, src []byte) ([]byte, error) {
	n := len(src)
	if n >= limit64k {
		return dst, ErrTooLarge
	}
	var table [1 << hashLog]uint16
	anchor := 0
	ip := 0
	if n < minLength {
		return lastLiteralRun(dst, src, anchor), nil
	}
	mflimitPlusOne := n - mfLimit + 1
	matchLimit := n - lastLiterals

	table[hash(read32(src, ip))] = uint16(ip)
	ip++
	forwardH := hash(read32(src, ip))

	for {
		var match int
		// Find a match, skipping faster the longer nothing matches.
		{
			forwardIP := ip
			step := 1
			searchMatchNb := 1 << skipTrigger
			for {
				h := forwardH
				current := forwardIP
				matchIndex := int(table[h])
				ip = forwardIP
				forwardIP += step
				step = searchMatchNb >> skipTrigger
				searchMatchNb++
				if forwardIP > mflimitPlusOne {
					return lastLiteralRun(dst, src, anchor), nil
				}
				match = matchIndex
				forwardH = hash(read32(src, forwardIP))
				table[h] = uint16(current)
				if read32(src, match) == read32(src, ip) {
					break
				}
			}
		}
		// Catch up: extend the match backwards over equal bytes.
		for ip > anchor && match > 0 && src[ip-1] == src[match-1] {
			ip--
			match--
		}
		// Literals.
		litLen := ip - anchor
		token := len(dst)
		dst = append(dst, 0)
		if litLen >= runMask {
			dst[token] = runMask << mlBits
			l := litLen - runMask
			for ; l >= 255; l -= 255 {
				dst = append(dst, 255)
			}
			dst = append(dst, byte(l))
		} else {
			dst[token] = byte(litLen << mlBits)
		}
		dst = append(dst, src[anchor:ip]...)

		for {
			// Offset and match length.
			dst = append(dst, byte(ip-match), byte((ip-match)>>8))
			matchCode := count(src, ip+minMatch, match+minMatch, matchLimit)
			ip += matchCode + minMatch
			if matchCode >= mlMask {
				dst[token] += mlMask
				matchCode -= mlMask
				for ; matchCode >= 255; matchCode -= 255 {
					dst = append(dst, 255)
				}
				dst = append(dst, byte(matchCode))
			} else {
				dst[token] += byte(matchCode)
			}
			anchor = ip
			if ip >= mflimitPlusOne {
				return lastLiteralRun(dst, src, anchor), nil
			}
			// Fill the table, then try an immediate match at ip.
			table[hash(read32(src, ip-2))] = uint16(ip - 2)
			h := hash(read32(src, ip))
			match = int(table[h])
			table[h] = uint16(ip)
			if read32(src, match) != read32(src, ip) {
				break
			}
			token = len(dst)
			dst = append(dst, 0)
		}
		ip++
		forwardH = hash(read32(src, ip))
	}
}

// count returns how many bytes match from a and b, stopping at limit.
func count(src []byte, a, b, limit int) int {
	start := a
	for a < limit-7 {
		x := binary.LittleEndian.Uint64(src[a:]) ^ binary.LittleEndian.Uint64(src[b:])
		if x != 0 {
			return a - start + trailingZeroBytes(x)
		}
		a += 8
		b += 8
	}
	for a < limit && src[a] == src[b] {
		a++
		b++
	}
	return a - start
}

func trailingZeroBytes(x uint64) int {
	n := 0
	for x&0xFF == 0 {
		x >>= 8
		n++
	}
	return n
}

func lastLiteralRun(dst, src []byte, anchor int) []byte {
	last := len(src) - anchor
	if last >= runMask {
		dst = append(dst, runMask<<mlBits)
		l := last - runMask
		for ; l >= 255; l -= 255 {
			dst = append(dst, 255)
		}
		dst = append(dst, byte(l))
	} else {
		dst = append(dst, byte(last<<mlBits))
	}
	return append(dst, src[anchor:]...)
}
