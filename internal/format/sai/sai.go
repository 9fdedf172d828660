// Package sai checks the files of Cassandra 5.0's storage-attached indexes
// (SAI) the way Cassandra checks them when it loads them: every SAI file
// but the GroupComplete marker (an empty file, Files.touch) is framed by
// Lucene's codec header and footer as SAICodecUtils writes them
// (index/sai/disk/v1/SAICodecUtils.java, with Lucene's CodecUtil
// constants):
//
//	header: int CODEC_MAGIC 0x3FD76C17, big-endian (writeBEInt);
//	        the SAI version ("aa", Version.LATEST) as Lucene's writeString:
//	        a VInt length, then the UTF-8 bytes;
//	body:   the component's own data, not read here;
//	footer: int FOOTER_MAGIC (~CODEC_MAGIC, 0xC02893E8), big-endian;
//	        int 0, the algorithm id, big-endian;
//	        long checksum, big-endian: the CRC32C (IndexFileUtils'
//	        CHECKSUM_FACTORY) of every byte before it, whose top 32 bits
//	        must be zero (CodecUtil.footerLength() = 16 bytes in all).
//
// Check does what SAICodecUtils.validate (the header, then the footer at
// the end of the file: what Cassandra runs at startup, IndexValidation
// HEADER_FOOTER) and validateChecksum (the CRC of the whole file: a
// rebuild's or nodetool verify's IndexValidation CHECKSUM) do together.
// Hand-written: the layout is Lucene's framing as Cassandra uses it, and
// no Go library reads it.
package sai

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"unicode/utf8"

	"github.com/sstabletool/sstabletool/corrupt"
)

// The framing's constants (Lucene's CodecUtil).
const (
	CodecMagic   uint32 = 0x3FD76C17
	FooterMagic  uint32 = ^CodecMagic
	FooterLength        = 16
)

// Versions are the SAI on-disk versions Cassandra knows (Version.ALL).
var Versions = []string{"aa"}

// castagnoli is CRC32C's table (java.util.zip.CRC32C).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Frame is what a component's framing holds.
type Frame struct {
	Version  string
	BodyPos  int64  // where the component's own data starts
	BodyLen  int64  // its length, up to the footer
	Checksum uint32 // the CRC32C of every byte before the last checksum
	// Segments is how many framed segments the file holds: 1, or, for a
	// file an index build appended to (one segment per flush of a
	// compaction's SegmentBuilder), each segment framed and checksummed
	// on its own. Cassandra's validateChecksum takes a whole-file CRC,
	// which only a file of one segment passes; Check accepts a chain of
	// segments whose every checksum is right.
	Segments int
}

// maxVersionLen bounds the header's version string: Cassandra's are two
// letters; a damaged length must not make Check read far.
const maxVersionLen = 64

// Check reads the framing of the SAI component r holds (size bytes) and
// checks it, the whole file's checksum included. Errors are
// *corrupt.Error with the byte offset and what was expected there (the
// file and component are the caller's to place); a checksum mismatch wraps
// corrupt.ErrChecksum.
func Check(r io.ReaderAt, size int64) (*Frame, error) {
	if size < FooterLength+5 {
		// The header's magic and a version length, and the footer.
		return nil, corrupt.New("", "", 0, fmt.Sprintf("at least %d bytes: a codec header and a %d-byte footer", FooterLength+5, FooterLength),
			fmt.Errorf("the file has %d bytes", size))
	}
	var head [4 + 5 + maxVersionLen]byte
	n := min(int64(len(head)), size-FooterLength)
	if _, err := r.ReadAt(head[:n], 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	h := head[:n]
	if m := binary.BigEndian.Uint32(h); m != CodecMagic {
		return nil, corrupt.New("", "", 0, fmt.Sprintf("the codec header magic 0x%08X (SAICodecUtils.checkHeader)", CodecMagic), fmt.Errorf("found 0x%08X", m))
	}
	vlen, w, err := vint(h[4:])
	if err != nil {
		return nil, corrupt.New("", "", 4, "the version's length as a Lucene VInt", err)
	}
	if vlen > maxVersionLen || int64(4+w)+int64(vlen) > int64(len(h)) {
		return nil, corrupt.New("", "", 4, "the length of a version string that ends before the footer", fmt.Errorf("length %d", vlen))
	}
	ver := string(h[4+w : 4+w+int(vlen)])
	known := false
	for _, v := range Versions {
		known = known || v == ver
	}
	if !known || !utf8.ValidString(ver) {
		// Reported where the string starts, at its length.
		return nil, corrupt.New("", "", 4, fmt.Sprintf("an SAI version Cassandra knows (%v, Version.parse)", Versions), fmt.Errorf("found %q", ver))
	}
	f := &Frame{Version: ver, BodyPos: int64(4 + w + int(vlen))}
	foot := size - FooterLength
	f.BodyLen = foot - f.BodyPos

	// The footer: SAICodecUtils.validateFooter, then checkFooter's
	// checksum over everything before it (validateChecksum).
	var ft [FooterLength]byte
	if _, err := r.ReadAt(ft[:], foot); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if m := binary.BigEndian.Uint32(ft[:]); m != FooterMagic {
		return nil, corrupt.New("", "", foot, fmt.Sprintf("the codec footer magic 0x%08X (file truncated or extended?)", FooterMagic), fmt.Errorf("found 0x%08X", m))
	}
	if a := binary.BigEndian.Uint32(ft[4:]); a != 0 {
		return nil, corrupt.New("", "", foot+4, "the footer's algorithm id 0", fmt.Errorf("found %d", a))
	}
	sum := binary.BigEndian.Uint64(ft[8:])
	if sum>>32 != 0 {
		return nil, corrupt.New("", "", foot+8, "a checksum whose top 32 bits are zero", fmt.Errorf("found 0x%016X", sum))
	}
	crc, err := crcUpdate(0, r, 0, size-8)
	if err != nil {
		return nil, err
	}
	f.Checksum, f.Segments = crc, 1
	if uint32(sum) == crc {
		return f, nil
	}
	// Written in segments? (See Frame.Segments.)
	if n, err := segments(r, size); err != nil {
		return nil, err
	} else if n > 1 {
		f.Segments = n
		return f, nil
	}
	return nil, corrupt.New("", "", foot+8, fmt.Sprintf("the CRC32C of bytes 0..%d", size-8),
		fmt.Errorf("%w: stored 0x%08X, computed 0x%08X", corrupt.ErrChecksum, uint32(sum), crc))
}

// segments reads the file as the segments a compaction's index build
// appends to TermsData, PostingLists and BalancedTree (they are opened
// with append set: TrieTermsDictionaryWriter, PostingsWriter,
// NumericIndexWriter), each framed on its own, with a checksum of its own
// bytes only (IndexFileUtils.ChecksummingWriter counts what one opening
// writes): header, body, footer, the next header right after. It returns
// how many segments chain from the start to the end of the file with
// every checksum right; 0 when they do not.
func segments(r io.ReaderAt, size int64) (int, error) {
	var magic [8]byte
	binary.BigEndian.PutUint32(magic[:], FooterMagic) // and the algorithm id 0
	const block = 1 << 20
	buf := make([]byte, block+FooterLength)
	start, hashed := int64(0), int64(0) // the segment's start; how far crc covers
	var crc uint32
	n := 0
	if ok, err := headerAt(r, 0, size); !ok || err != nil {
		return 0, err
	}
	for off := int64(0); off < size; off += block {
		m := min(int64(len(buf)), size-off)
		if _, err := r.ReadAt(buf[:m], off); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		b := buf[:m]
		for j := 0; j < int(min(block, m)); {
			k := bytes.Index(b[j:], magic[:])
			if k < 0 {
				break
			}
			i := off + int64(j+k) // a footer candidate
			j += k + 1
			if i < start+5 || i+FooterLength > size || i+8 < hashed {
				continue
			}
			var err error
			if crc, err = crcUpdate(crc, r, hashed, i+8); err != nil {
				return 0, err
			}
			hashed = i + 8
			var sb [8]byte
			if _, err := r.ReadAt(sb[:], i+8); err != nil && !errors.Is(err, io.EOF) {
				return 0, err
			}
			sum := binary.BigEndian.Uint64(sb[:])
			if sum>>32 != 0 || uint32(sum) != crc {
				continue
			}
			end := i + FooterLength
			if end < size {
				if ok, err := headerAt(r, end, size); err != nil || !ok {
					if err != nil {
						return 0, err
					}
					continue
				}
			}
			n++
			if end == size {
				return n, nil
			}
			start, hashed, crc = end, end, 0
		}
	}
	return 0, nil
}

// crcUpdate adds r's bytes from..to to the CRC32C crc, read a block at a
// time.
func crcUpdate(crc uint32, r io.ReaderAt, from, to int64) (uint32, error) {
	buf := make([]byte, max(min(to-from, 1<<20), 0))
	for off := from; off < to; {
		k := min(int64(len(buf)), to-off)
		if _, err := r.ReadAt(buf[:k], off); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		crc = crc32.Update(crc, castagnoli, buf[:k])
		off += k
	}
	return crc, nil
}

// headerAt reports whether a codec header with a version Cassandra knows
// starts at off.
func headerAt(r io.ReaderAt, off, size int64) (bool, error) {
	var h [4 + 1 + 8]byte
	n := min(int64(len(h)), size-off)
	if n < 5 {
		return false, nil
	}
	if _, err := r.ReadAt(h[:n], off); err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	if binary.BigEndian.Uint32(h[:]) != CodecMagic {
		return false, nil
	}
	l := int64(h[4])
	if l >= 0x80 || 5+l > n {
		return false, nil
	}
	return slices.Contains(Versions, string(h[5:5+l])), nil
}

// vint reads Lucene's DataInput.readVInt: 7 bits a byte, low groups
// first, at most 5 bytes.
func vint(b []byte) (uint32, int, error) {
	var v uint32
	for i := 0; i < 5; i++ {
		if i >= len(b) {
			return 0, 0, io.ErrUnexpectedEOF
		}
		v |= uint32(b[i]&0x7F) << (7 * i)
		if b[i]&0x80 == 0 {
			return v, i + 1, nil
		}
	}
	return 0, 0, errors.New("more than 5 bytes")
}

// ColumnCompleteEmpty reads a ColumnComplete marker's body
// (ColumnCompletionMarkerUtil: one byte, 1 when the index of this sstable
// is empty, 0 when it is not), whose framing Check has passed. Only the
// value 1 is read as empty (isEmptyIndex); any other byte is reported.
func ColumnCompleteEmpty(r io.ReaderAt, f *Frame) (bool, error) {
	if f.BodyLen != 1 {
		return false, corrupt.New("", "", f.BodyPos, "the one byte of a column completion marker", fmt.Errorf("the body has %d bytes", f.BodyLen))
	}
	var b [1]byte
	if _, err := r.ReadAt(b[:], f.BodyPos); err != nil {
		return false, err
	}
	switch b[0] {
	case 0:
		return false, nil
	case 1:
		return true, nil
	}
	return false, corrupt.New("", "", f.BodyPos, "0 (the index holds terms) or 1 (empty)", fmt.Errorf("found %d", b[0]))
}

// AppendFramed appends body in SAI's framing with version: what SAICodecUtils'
// writeHeader, the body, and writeFooter write. For tests and fixtures
// built from the layout above.
func AppendFramed(dst []byte, version string, body []byte) []byte {
	start := len(dst)
	dst = binary.BigEndian.AppendUint32(dst, CodecMagic)
	for v := uint32(len(version)); ; v >>= 7 {
		if v < 0x80 {
			dst = append(dst, byte(v))
			break
		}
		dst = append(dst, byte(v)|0x80)
	}
	dst = append(dst, version...)
	dst = append(dst, body...)
	dst = binary.BigEndian.AppendUint32(dst, FooterMagic)
	dst = binary.BigEndian.AppendUint32(dst, 0)
	crc := crc32.Checksum(dst[start:], castagnoli)
	return binary.BigEndian.AppendUint64(dst, uint64(crc))
}
