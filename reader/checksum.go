package reader

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/sstabletool/sstabletool/corrupt"
)

const (
	crcComponent    = "CRC.db"
	digestComponent = "Digest.crc32"
	// digestReadSize is how much DigestCRC32 reads at a time from a
	// Buffered file.
	digestReadSize = 1 << 20
)

// DigestCRC32 computes the CRC32 of the whole on-disk file, as Cassandra
// stores it in Digest.crc32 (ChecksumWriter.writeFullChecksum). For a
// compressed Data.db that covers the stored chunks and their CRCs; for an
// uncompressed one, the data itself.
func DigestCRC32(f File) (uint32, error) {
	if m, ok := f.(Mapped); ok {
		return crc32.ChecksumIEEE(m.Bytes()), nil
	}
	size := f.Size()
	buf := make([]byte, min(size, digestReadSize))
	var sum uint32
	for off := int64(0); off < size; {
		b := buf[:min(int64(len(buf)), size-off)]
		if _, err := f.ReadAt(b, off); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, fmt.Errorf("digest of %s at byte %d: %w", f.Path(), off, err)
		}
		sum = crc32.Update(sum, crc32.IEEETable, b)
		off += int64(len(b))
	}
	return sum, nil
}

// ParseDigestFile reads Digest.crc32: the CRC32 as unsigned decimal text
// (Java's String.valueOf of a long), optionally followed by a line end.
func ParseDigestFile(b []byte) (uint32, error) {
	s := strings.TrimRight(string(b), "\r\n")
	v, err := strconv.ParseUint(s, 10, 32)
	if err != nil || s == "" || s[0] == '+' {
		if err == nil {
			err = fmt.Errorf("found %q", s)
		}
		return 0, corrupt.New("", digestComponent, 0, "a CRC32 in unsigned decimal (0 to 4294967295)", err)
	}
	return uint32(v), nil
}

// ChunkChecksums is CRC.db, the checksums of an uncompressed Data.db
// (ChecksumWriter.java, DataIntegrityMetadata.ChecksumValidator): an int
// chunk size, then the big-endian CRC32 of each chunk of Data.db in turn,
// the last chunk possibly shorter.
type ChunkChecksums struct {
	ChunkSize int
	CRCs      []uint32
}

// DecodeChecksums decodes CRC.db.
func DecodeChecksums(b []byte) (*ChunkChecksums, error) {
	if len(b) < 4 {
		return nil, corrupt.New("", crcComponent, 0, "a 4-byte chunk size", fmt.Errorf("%w: file is %d bytes", io.ErrUnexpectedEOF, len(b)))
	}
	size := int32(binary.BigEndian.Uint32(b))
	if size <= 0 {
		return nil, corrupt.New("", crcComponent, 0, "a positive chunk size", fmt.Errorf("found %d", size))
	}
	if (len(b)-4)%4 != 0 {
		return nil, corrupt.New("", crcComponent, int64(len(b)-(len(b)-4)%4), "4-byte CRCs after the chunk size", fmt.Errorf("%w: %d stray bytes at the end", io.ErrUnexpectedEOF, (len(b)-4)%4))
	}
	c := &ChunkChecksums{ChunkSize: int(size), CRCs: make([]uint32, (len(b)-4)/4)}
	for i := range c.CRCs {
		c.CRCs[i] = binary.BigEndian.Uint32(b[4+4*i:])
	}
	return c, nil
}

// Encode serializes c as CRC.db.
func (c *ChunkChecksums) Encode() []byte {
	out := binary.BigEndian.AppendUint32(make([]byte, 0, 4+4*len(c.CRCs)), uint32(c.ChunkSize))
	for _, v := range c.CRCs {
		out = binary.BigEndian.AppendUint32(out, v)
	}
	return out
}

// Verify checks every chunk of the uncompressed Data.db f against c and
// returns one *corrupt.Error per bad chunk (wrapping corrupt.ErrChecksum), plus one
// when CRC.db holds too few CRCs for the file's size. Extra CRCs are what
// a writer leaves when it flushes an empty last chunk (ChecksumWriter
// appends the CRC32 of no bytes, 0): those are fine, any other extra CRC is
// reported. A read failure ends the check with that error.
func (c *ChunkChecksums) Verify(f File) []error {
	var errs []error
	size := f.Size()
	chunk := int64(c.ChunkSize)
	// Writers store their buffer's size: Cassandra's is 64 KiB, ScyllaDB
	// has written 4 KiB; always a power of two. A damaged size still
	// divides a Data.db smaller than both into one chunk with the same
	// CRC, so only its shape tells.
	if chunk&(chunk-1) != 0 {
		errs = append(errs, corrupt.New(f.Path(), crcComponent, 0, "a chunk size that is a power of two (Cassandra writes 65536)", fmt.Errorf("found %d", chunk)))
	}
	chunks := (size + chunk - 1) / chunk
	if chunks > int64(len(c.CRCs)) {
		errs = append(errs, corrupt.New(f.Path(), crcComponent, 4+4*int64(len(c.CRCs)),
			fmt.Sprintf("%d CRCs for %d bytes of Data.db in chunks of %d", chunks, size, chunk),
			fmt.Errorf("%w: found %d", io.ErrUnexpectedEOF, len(c.CRCs))))
	}
	emptyCRC := crc32.ChecksumIEEE(nil)
	for i := chunks; i < int64(len(c.CRCs)); i++ {
		if c.CRCs[i] != emptyCRC {
			errs = append(errs, corrupt.New(f.Path(), crcComponent, 4+4*i,
				fmt.Sprintf("CRC %d, past the %d chunks of Data.db, to be the CRC32 of an empty chunk (%#08x)", i, chunks, emptyCRC),
				fmt.Errorf("found %#08x", c.CRCs[i])))
		}
	}
	var mapped, buf []byte
	if m, ok := f.(Mapped); ok {
		mapped = m.Bytes()
	} else {
		buf = make([]byte, min(chunk, size))
	}
	for i := int64(0); i < min(chunks, int64(len(c.CRCs))); i++ {
		start := i * chunk
		n := min(chunk, size-start)
		var b []byte
		if mapped != nil {
			b = mapped[start : start+n]
		} else {
			b = buf[:n]
			if _, err := f.ReadAt(b, start); err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return append(errs, corrupt.New(f.Path(), dataComponent, start, fmt.Sprintf("chunk %d of %d bytes", i, n), err))
			}
		}
		if got := crc32.ChecksumIEEE(b); got != c.CRCs[i] {
			errs = append(errs, corrupt.New(f.Path(), dataComponent, start,
				fmt.Sprintf("chunk %d (%d bytes) to match CRC.db's CRC32 %#08x", i, n, c.CRCs[i]),
				fmt.Errorf("%w: computed %#08x", corrupt.ErrChecksum, got)))
		}
	}
	return errs
}

// VerifyChunks checks the CRC32 stored after every compressed chunk of d
// against the chunk's stored bytes (without decompressing) and returns one
// *corrupt.Error per bad chunk. An uncompressed Data.db has no chunk CRCs of
// its own (they are in CRC.db, see ChunkChecksums): that is reported as a
// single error rather than an empty, reassuring result. It checks ranges of
// chunks on every core (GOMAXPROCS) and returns the errors of one pass:
// in order, up to the first chunk it could not read. A chunk d's reads
// have checked already is not checked again, and d's reads take the chunks
// whose CRC32 matched as checked from then on (they check no CRC32 again).
func VerifyChunks(d *Data) []error {
	errs, _, _ := VerifyChunksDigest(d)
	return errs
}

// VerifyChunksDigest is VerifyChunks that also returns the CRC32 of the
// whole file (DigestCRC32's, what Digest.crc32 stores) without a second
// pass over its bytes: each chunk's CRC32 (the one stored after it, for a
// chunk checked already or found to match; else the one just computed)
// is extended over the stored CRC that follows it, and the chunks' values
// are put together in file order by CRC32's combination rule. ok is false
// when the digest is not known so: a chunk could not be read, the file is
// not mapped (a Buffered read of every chunk checked already would cost
// more than DigestCRC32), or it is not compressed; DigestCRC32 then says.
func VerifyChunksDigest(d *Data) (errs []error, digest uint32, ok bool) {
	if d.info == nil {
		return []error{fmt.Errorf("%s: Data.db is not compressed; its checksums are in CRC.db", d.path)}, 0, false
	}
	dataChunks := d.info.DataChunks()
	if d.lengthFixed {
		// The stored length is damaged (reported as such): chunks past it
		// are the data, and only those past the chunks' length are extra.
		dataChunks = int(max((d.length+d.chunkLen-1)/d.chunkLen, 1))
	}
	n := len(d.info.ChunkOffsets)
	parts := max(min(runtime.GOMAXPROCS(0), n/verifyChunksPerPart), 1)
	// On every core, each a range of the chunks; their errors are put
	// together in order, up to the first chunk that could not be read,
	// where one pass would have stopped.
	results := make([]chunkRange, parts)
	if parts == 1 {
		results[0] = d.verifyChunks(0, n, dataChunks)
	} else {
		var wg sync.WaitGroup
		for p := range parts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[p] = d.verifyChunks(n*p/parts, n*(p+1)/parts, dataChunks)
			}()
		}
		wg.Wait()
	}
	ok = d.mapped != nil
	if ok {
		// Bytes before the first chunk (none in what Cassandra writes).
		digest = crc32.ChecksumIEEE(d.mapped[:d.info.ChunkOffsets[0]])
	}
	for _, r := range results {
		errs = append(errs, r.errs...)
		digest = crc32Combine(digest, r.digest, r.length)
		if r.stopped {
			ok = false
			break
		}
	}
	return errs, digest, ok
}

// chunkRange is what verifyChunks found in a range of chunks.
type chunkRange struct {
	errs    []error
	stopped bool   // at a chunk it could not read (the last error)
	digest  uint32 // the CRC32 of the range's bytes (for a mapped file)
	length  int64  // how many bytes that is
}

// verifyChunksPerPart is the fewest chunks VerifyChunks gives a goroutine.
const verifyChunksPerPart = 256

// verifyChunks checks chunks [from, to).
func (d *Data) verifyChunks(from, to, dataChunks int) (r chunkRange) {
	var ra readAhead
	for i := from; i < to; i++ {
		idx := int64(i)
		_, stored := d.storedChunk(idx)
		length := int64(stored) + 4
		if i < dataChunks && d.isChecked(idx) {
			// Checked by a read: its stored CRC32 is the one it matched.
			if sum := d.sums[idx].Load(); d.mapped != nil {
				var crc [4]byte
				binary.BigEndian.PutUint32(crc[:], sum)
				r.digest = crc32Combine(r.digest, crc32.Update(sum, crc32.IEEETable, crc[:]), length)
				r.length += length
			}
			continue
		}
		b, err := d.readStored(idx, &ra)
		if err != nil {
			r.errs, r.stopped = append(r.errs, err), true
			return r
		}
		good := d.isChecked(idx)
		if !good {
			if err := d.checkCRC(idx, b); err != nil {
				r.errs = append(r.errs, err)
			} else {
				good = true
			}
		}
		if d.mapped != nil {
			sum := d.sums[idx].Load()
			if !good {
				sum = crc32.ChecksumIEEE(b[:stored])
			}
			r.digest = crc32Combine(r.digest, crc32.Update(sum, crc32.IEEETable, b[stored:]), length)
			r.length += length
		}
		// A chunk past the data length is read by no one; writers leave
		// one empty chunk there. Anything in it is data the length lost.
		if i >= dataChunks && good {
			if err := d.checkEmptyChunk(idx, b); err != nil {
				r.errs = append(r.errs, err)
			}
		}
	}
	return r
}

// crc32Combine returns the CRC32 (IEEE, as hash/crc32 takes it) of a||b
// from a's CRC32, b's and b's length: a's advanced over n bytes (times
// x^(8n), modulo the polynomial) added to b's, as zlib's crc32_combine
// does. hash/crc32 has no such function, and computing the digest of
// Data.db again byte by byte is the pass this saves.
func crc32Combine(a, b uint32, n int64) uint32 {
	if n == 0 {
		return a ^ b
	}
	return gfMul(xPow8n(n), a) ^ b
}

// crcPoly is CRC-32's polynomial, bit-reflected as hash/crc32.IEEE.
const crcPoly = 0xedb88320

// gfMul multiplies two polynomials modulo crcPoly, in the bit-reflected
// form (the top bit is x^0).
func gfMul(a, b uint32) uint32 {
	var p uint32
	for m := uint32(1) << 31; m != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
		}
		b = b>>1 ^ crcPoly&-(b&1)
	}
	return p
}

// crcX2n holds x^(2^k) modulo crcPoly for every k xPow8n needs.
var crcX2n = func() (t [67]uint32) {
	p := uint32(1) << 30 // x^1
	for k := range t {
		t[k] = p
		p = gfMul(p, p)
	}
	return t
}()

// xPow8n is x^(8n) modulo crcPoly: what a CRC is multiplied by to move it
// past n bytes.
func xPow8n(n int64) uint32 {
	p := uint32(1) << 31 // x^0
	for k := 3; n != 0; n, k = n>>1, k+1 {
		if n&1 != 0 {
			p = gfMul(crcX2n[k], p)
		}
	}
	return p
}

// checkEmptyChunk reports a chunk past the data length that holds bytes.
func (d *Data) checkEmptyChunk(idx int64, b []byte) error {
	off, _ := d.storedChunk(idx)
	n, err := d.plainLength(idx, b)
	if err != nil {
		return corrupt.New(d.path, dataComponent, off, fmt.Sprintf("chunk %d, past the data length, to decompress with %s", idx, d.comp.Name()), err)
	}
	if n != 0 {
		return corrupt.New(d.path, dataComponent, off,
			fmt.Sprintf("chunk %d, past the data length of %d, to be empty", idx, d.length),
			fmt.Errorf("it holds %d uncompressed bytes", n))
	}
	return nil
}

// plainLength is how many uncompressed bytes chunk idx holds (b is its
// stored bytes and CRC): a raw chunk its stored length, else what it
// decompresses to, limited to one chunk (no stored length prefix is
// trusted).
func (d *Data) plainLength(idx int64, b []byte) (int, error) {
	_, stored := d.storedChunk(idx)
	if int64(stored) >= d.threshold {
		return stored, nil
	}
	out, err := d.comp.(limitedDecompressor).decompressLimit(nil, b[:stored], int(d.chunkLen))
	return len(out), err
}
