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
// in order, up to the first chunk it could not read. d's reads take the
// chunks whose CRC32 matched as checked from then on (they check no CRC32
// again).
func VerifyChunks(d *Data) []error {
	if d.info == nil {
		return []error{fmt.Errorf("%s: Data.db is not compressed; its checksums are in CRC.db", d.path)}
	}
	dataChunks := d.info.DataChunks()
	if d.lengthFixed {
		// The stored length is damaged (reported as such): chunks past it
		// are the data, and only those past the chunks' length are extra.
		dataChunks = int(max((d.length+d.chunkLen-1)/d.chunkLen, 1))
	}
	n := len(d.info.ChunkOffsets)
	parts := min(runtime.GOMAXPROCS(0), n/verifyChunksPerPart)
	if parts < 2 {
		errs, _ := d.verifyChunks(0, n, dataChunks)
		return errs
	}
	// On every core, each a range of the chunks; their errors are put
	// together in order, up to the first chunk that could not be read,
	// where one pass would have stopped.
	type result struct {
		errs    []error
		stopped bool
	}
	results := make([]result, parts)
	var wg sync.WaitGroup
	for p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[p].errs, results[p].stopped = d.verifyChunks(n*p/parts, n*(p+1)/parts, dataChunks)
		}()
	}
	wg.Wait()
	var errs []error
	for _, r := range results {
		errs = append(errs, r.errs...)
		if r.stopped {
			break
		}
	}
	return errs
}

// verifyChunksPerPart is the fewest chunks VerifyChunks gives a goroutine.
const verifyChunksPerPart = 256

// verifyChunks checks chunks [from, to) and reports whether it stopped at
// one it could not read (the last error).
func (d *Data) verifyChunks(from, to, dataChunks int) (errs []error, stopped bool) {
	var ra readAhead
	for i := from; i < to; i++ {
		b, err := d.readStored(int64(i), &ra)
		if err != nil {
			return append(errs, err), true
		}
		if err := d.checkCRC(int64(i), b); err != nil {
			errs = append(errs, err)
			continue
		}
		// A chunk past the data length is read by no one; writers leave
		// one empty chunk there. Anything in it is data the length lost.
		if i >= dataChunks {
			if err := d.checkEmptyChunk(int64(i), b); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs, false
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
