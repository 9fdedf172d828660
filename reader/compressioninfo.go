package reader

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/sstabletool/sstabletool/corrupt"
)

const compressionInfoComponent = "CompressionInfo.db"

// CompressionInfo is the content of CompressionInfo.db: how Data.db was cut
// into chunks and compressed, and where each compressed chunk starts.
//
// Layout (CompressionMetadata.java and its Writer; CompressionParams.java),
// all integers big-endian:
//
//	writeUTF compressor class name
//	int      option count, then count × (writeUTF key, writeUTF value)
//	int      chunk length (uncompressed bytes per chunk, a power of two)
//	int      max compressed length  (only in na and later)
//	long     uncompressed data length
//	int      chunk count
//	long     × count: file offset of each chunk in Data.db
type CompressionInfo struct {
	// Compressor is the class name exactly as stored: Cassandra writes the
	// simple name ("LZ4Compressor"); a fully qualified name also resolves.
	Compressor string
	// Options are the compressor's own options ("other options" in
	// CompressionParams); OptionKeys keeps their order in the file so Encode
	// reproduces it.
	Options    map[string]string
	OptionKeys []string
	// ChunkLength is the number of uncompressed bytes per chunk.
	ChunkLength int
	// MaxCompressedLength is the stored threshold at or above which a chunk
	// holds raw bytes instead of compressed ones; 0 when the version does
	// not store it (before na), in which case every chunk is compressed.
	MaxCompressedLength int
	// DataLength is the uncompressed length of Data.db.
	DataLength int64
	// ChunkOffsets are the Data.db file offsets of the chunks, in order.
	ChunkOffsets []int64

	// TrailingBytes counts bytes after the last chunk offset: Cassandra
	// ignores them; verify reports them.
	TrailingBytes int

	// countAt is where the chunk count is stored (0 when not decoded);
	// maxAt the max compressed length (0 when the version has none).
	countAt, maxAt int64
	lengthAt       int64 // the data length
	// offsetsAt is the position of ChunkOffsets[0] in the decoded bytes,
	// kept so errors about an offset can name where it is stored.
	offsetsAt int64
}

// decodeBuf is a bounds-checked big-endian reader over a component held in
// memory; every failure names the component and the offset.
type decodeBuf struct {
	b         []byte
	off       int
	component string
}

func (d *decodeBuf) fail(at int, expected string, err error) error {
	return corrupt.New("", d.component, int64(at), expected, err)
}

func (d *decodeBuf) need(n int, expected string) error {
	if n < 0 || len(d.b)-d.off < n {
		return d.fail(d.off, expected, fmt.Errorf("%w: %d bytes needed, %d remain", io.ErrUnexpectedEOF, n, len(d.b)-d.off))
	}
	return nil
}

func (d *decodeBuf) u16(expected string) (int, error) {
	if err := d.need(2, expected); err != nil {
		return 0, err
	}
	v := binary.BigEndian.Uint16(d.b[d.off:])
	d.off += 2
	return int(v), nil
}

func (d *decodeBuf) i32(expected string) (int32, error) {
	if err := d.need(4, expected); err != nil {
		return 0, err
	}
	v := int32(binary.BigEndian.Uint32(d.b[d.off:]))
	d.off += 4
	return v, nil
}

func (d *decodeBuf) i64(expected string) (int64, error) {
	if err := d.need(8, expected); err != nil {
		return 0, err
	}
	v := int64(binary.BigEndian.Uint64(d.b[d.off:]))
	d.off += 8
	return v, nil
}

func (d *decodeBuf) utf(expected string) (string, error) {
	at := d.off
	n, err := d.u16(expected + " length")
	if err != nil {
		return "", err
	}
	if err := d.need(n, expected); err != nil {
		return "", err
	}
	s, err := decodeModifiedUTF8(d.b[d.off : d.off+n])
	if err != nil {
		return "", d.fail(at, expected+" in Java modified UTF-8", err)
	}
	d.off += n
	return s, nil
}

// DecodeCompressionInfo decodes CompressionInfo.db. hasMaxCompressedLength
// is the version's flag (na and later). It accepts what Cassandra's reader
// accepts and checks what it relies on: a positive power-of-two chunk
// length, a non-negative data length, a positive chunk count whose offsets
// are all present and increase by at least a CRC's 4 bytes. The count may
// exceed ceil(DataLength / ChunkLength) (real writers end with an empty
// chunk) or fall short of it (reads past the last chunk then fail), and
// bytes may follow the offsets; Check reports all three. Errors are
// *corrupt.Error with Component "CompressionInfo.db" and an empty File
// (OpenData fills it in).
func DecodeCompressionInfo(b []byte, hasMaxCompressedLength bool) (*CompressionInfo, error) {
	d := &decodeBuf{b: b, component: compressionInfoComponent}
	c := &CompressionInfo{}
	var err error
	if c.Compressor, err = d.utf("compressor class name"); err != nil {
		return nil, err
	}
	at := d.off
	count, err := d.i32("option count")
	if err != nil {
		return nil, err
	}
	// Each option takes at least 4 bytes (two empty strings).
	if count < 0 || int64(count)*4 > int64(len(b)-d.off) {
		return nil, d.fail(at, fmt.Sprintf("option count between 0 and %d (4 bytes each)", (len(b)-d.off)/4), fmt.Errorf("found %d", count))
	}
	c.Options = make(map[string]string, count)
	c.OptionKeys = make([]string, 0, count)
	for i := 0; i < int(count); i++ {
		at := d.off
		k, err := d.utf(fmt.Sprintf("option %d key", i))
		if err != nil {
			return nil, err
		}
		v, err := d.utf(fmt.Sprintf("option %d value", i))
		if err != nil {
			return nil, err
		}
		if _, dup := c.Options[k]; dup {
			return nil, d.fail(at, "distinct option keys", fmt.Errorf("option %q appears twice", k))
		}
		c.Options[k] = v
		c.OptionKeys = append(c.OptionKeys, k)
	}
	at = d.off
	chunkLength, err := d.i32("chunk length")
	if err != nil {
		return nil, err
	}
	if chunkLength <= 0 || chunkLength&(chunkLength-1) != 0 {
		return nil, d.fail(at, "a positive power-of-two chunk length", fmt.Errorf("found %d", chunkLength))
	}
	c.ChunkLength = int(chunkLength)
	if hasMaxCompressedLength {
		at = d.off
		c.maxAt = int64(at)
		m, err := d.i32("max compressed length")
		if err != nil {
			return nil, err
		}
		if m < 0 {
			return nil, d.fail(at, "a non-negative max compressed length", fmt.Errorf("found %d", m))
		}
		c.MaxCompressedLength = int(m)
	}
	at = d.off
	c.lengthAt = int64(at)
	if c.DataLength, err = d.i64("uncompressed data length"); err != nil {
		return nil, err
	}
	if c.DataLength < 0 {
		return nil, d.fail(at, "a non-negative data length", fmt.Errorf("found %d", c.DataLength))
	}
	at = d.off
	chunks, err := d.i32("chunk count")
	if err != nil {
		return nil, err
	}
	// Cassandra's reader (CompressionMetadata.readChunkOffsets) demands at
	// least one chunk and never compares the count with the data length:
	// writers end files with an empty chunk (flushData writes one even for
	// an empty buffer), and chunk i covers positions i×chunk length on, so
	// extra chunks are simply never read. Fewer chunks than the data needs
	// fail only when a position past them is read, as in Cassandra.
	if chunks <= 0 {
		return nil, d.fail(at, "a positive chunk count", fmt.Errorf("found %d", chunks))
	}
	if int64(chunks)*8 > int64(len(b)-d.off) {
		return nil, d.fail(at, fmt.Sprintf("a chunk count whose offsets (8 bytes each) fit in the %d bytes that follow", len(b)-d.off), fmt.Errorf("%w: found %d chunks", io.ErrUnexpectedEOF, chunks))
	}
	c.countAt = int64(at)
	c.offsetsAt = int64(d.off)
	c.ChunkOffsets = make([]int64, chunks)
	for i := range c.ChunkOffsets {
		at := d.off
		v, _ := d.i64("chunk offset")
		if v < 0 || (i > 0 && v < c.ChunkOffsets[i-1]+4) {
			return nil, d.fail(at, fmt.Sprintf("chunk %d offset non-negative and at least 4 bytes (a CRC) above the previous one", i), fmt.Errorf("found %d", v))
		}
		c.ChunkOffsets[i] = v
	}
	// Bytes after the offsets are never read by Cassandra; verify reports them.
	c.TrailingBytes = len(b) - d.off
	return c, nil
}

// DataChunks is the number of chunks the data length needs:
// ceil(DataLength / ChunkLength), and at least one (an empty Data.db still
// has its one empty chunk).
func (c *CompressionInfo) DataChunks() int {
	return int(max((c.DataLength+int64(c.ChunkLength)-1)/int64(c.ChunkLength), 1))
}

// Validate reports why the struct cannot be encoded as CompressionInfo.db:
// strings too long for writeUTF, options out of step with OptionKeys,
// values out of range or inconsistent with each other.
func (c *CompressionInfo) Validate() error {
	if n := modifiedUTF8Len(c.Compressor); n > math.MaxUint16 {
		return fmt.Errorf("compressor name is %d bytes, writeUTF allows 65535", n)
	}
	if len(c.OptionKeys) != len(c.Options) {
		return fmt.Errorf("%d option keys for %d options", len(c.OptionKeys), len(c.Options))
	}
	seen := make(map[string]bool, len(c.OptionKeys))
	for _, k := range c.OptionKeys {
		v, ok := c.Options[k]
		if !ok || seen[k] {
			return fmt.Errorf("option key %q missing from Options or listed twice", k)
		}
		seen[k] = true
		if modifiedUTF8Len(k) > math.MaxUint16 || modifiedUTF8Len(v) > math.MaxUint16 {
			return fmt.Errorf("option %q is too long for writeUTF", k)
		}
	}
	if c.ChunkLength <= 0 || c.ChunkLength > math.MaxInt32 || c.ChunkLength&(c.ChunkLength-1) != 0 {
		return fmt.Errorf("chunk length %d is not a positive power of two", c.ChunkLength)
	}
	if c.MaxCompressedLength < 0 || c.MaxCompressedLength > math.MaxInt32 {
		return fmt.Errorf("max compressed length %d out of range", c.MaxCompressedLength)
	}
	if c.DataLength < 0 {
		return fmt.Errorf("negative data length %d", c.DataLength)
	}
	if n := int64(len(c.ChunkOffsets)); n < int64(c.DataChunks()) || n > math.MaxInt32 {
		return fmt.Errorf("%d chunk offsets for data length %d in chunks of %d", n, c.DataLength, c.ChunkLength)
	}
	for i, o := range c.ChunkOffsets {
		if o < 0 || (i > 0 && o <= c.ChunkOffsets[i-1]) {
			return fmt.Errorf("chunk %d offset %d is negative or not above the previous one", i, o)
		}
	}
	return nil
}

// Encode serializes c as CompressionInfo.db; hasMaxCompressedLength is the
// version's flag. For a decoded file it reproduces the original bytes. It
// returns nil when Validate reports a problem.
func (c *CompressionInfo) Encode(hasMaxCompressedLength bool) []byte {
	if c.Validate() != nil {
		return nil
	}
	out := make([]byte, 0, 64+8*len(c.ChunkOffsets))
	out = appendUTF(out, c.Compressor)
	out = binary.BigEndian.AppendUint32(out, uint32(len(c.OptionKeys)))
	for _, k := range c.OptionKeys {
		out = appendUTF(out, k)
		out = appendUTF(out, c.Options[k])
	}
	out = binary.BigEndian.AppendUint32(out, uint32(c.ChunkLength))
	if hasMaxCompressedLength {
		out = binary.BigEndian.AppendUint32(out, uint32(c.MaxCompressedLength))
	}
	out = binary.BigEndian.AppendUint64(out, uint64(c.DataLength))
	out = binary.BigEndian.AppendUint32(out, uint32(len(c.ChunkOffsets)))
	for _, o := range c.ChunkOffsets {
		out = binary.BigEndian.AppendUint64(out, uint64(o))
	}
	return out
}

func appendUTF(dst []byte, s string) []byte {
	at := len(dst)
	dst = append(dst, 0, 0)
	dst = encodeModifiedUTF8(dst, s)
	binary.BigEndian.PutUint16(dst[at:], uint16(len(dst)-at-2))
	return dst
}

// rawThreshold is the stored length at or above which a chunk holds raw
// bytes. Without a stored max compressed length Cassandra uses
// Integer.MAX_VALUE, so no chunk is raw.
func (c *CompressionInfo) rawThreshold(hasMaxCompressedLength bool) int64 {
	if !hasMaxCompressedLength {
		return math.MaxInt32
	}
	return int64(c.MaxCompressedLength)
}

// Check reports what a strict verifier flags although Cassandra's reader
// tolerates it: a max compressed length CompressionParams would refuse,
// fewer chunks than the data length needs (the positions past
// them cannot be read), more than one chunk beyond what it needs (the
// length is damaged: Data reads take it from the chunks) and bytes after
// the last chunk offset. One extra chunk is not reported here: real
// writers end with an empty chunk, and VerifyChunks checks that extra
// chunks hold nothing. path names the file in the errors.
func (c *CompressionInfo) Check(path string) []error {
	var errs []error
	if n, want := len(c.ChunkOffsets), c.DataChunks(); n < want {
		errs = append(errs, corrupt.New(path, compressionInfoComponent, c.countAt,
			fmt.Sprintf("at least %d chunks for data length %d in chunks of %d", want, c.DataLength, c.ChunkLength),
			fmt.Errorf("found %d: uncompressed bytes from %d on are in no chunk", n, int64(n)*int64(c.ChunkLength))))
	}
	// CompressionParams.validate: a max compressed length is
	// Integer.MAX_VALUE (min_compress_ratio 0) or ceil(chunk length /
	// ratio) for a ratio of at least 1. The reader never validates the
	// stored one; a damaged one makes chunks read as raw or compressed
	// wrongly.
	if m := c.MaxCompressedLength; c.maxAt > 0 && m != math.MaxInt32 && (m < 1 || m > c.ChunkLength) {
		errs = append(errs, corrupt.New(path, compressionInfoComponent, c.maxAt,
			fmt.Sprintf("a max compressed length of 2147483647 (min_compress_ratio 0) or from 1 to the chunk length %d (a ratio of 1 or more)", c.ChunkLength),
			fmt.Errorf("found %d, which CompressionParams refuses", m)))
	}
	if n, want := len(c.ChunkOffsets), c.DataChunks(); n > want+1 {
		errs = append(errs, corrupt.New(path, compressionInfoComponent, c.countAt,
			fmt.Sprintf("at most %d chunks (one empty chunk after the %d the data length %d needs in chunks of %d)", want+1, want, c.DataLength, c.ChunkLength),
			fmt.Errorf("found %d: the data length is damaged (reads take it from the chunks)", n)))
	}
	if c.TrailingBytes > 0 {
		end := c.offsetsAt + 8*int64(len(c.ChunkOffsets))
		errs = append(errs, corrupt.New(path, compressionInfoComponent, end,
			"nothing after the last chunk offset", fmt.Errorf("%d stray bytes", c.TrailingBytes)))
	}
	return errs
}

// NonCassandraOptions lists the options of a CompressionInfo.db that
// Cassandra's own writers never store and its readers drop: today only
// crc_check_chance.
func (c *CompressionInfo) NonCassandraOptions() []string {
	if _, ok := c.Options[CRCCheckChanceOption]; ok {
		return []string{CRCCheckChanceOption}
	}
	return nil
}

// DataLengthOffset is where DataLength is stored in CompressionInfo.db
// (0 when c was not decoded from bytes).
func (c *CompressionInfo) DataLengthOffset() int64 { return c.lengthAt }

// ChunkCount is the number of chunks.
func (c *CompressionInfo) ChunkCount() int { return len(c.ChunkOffsets) }

// OffsetPosition is where chunk i's offset is stored inside
// CompressionInfo.db (for error messages and repair tools); -1 when c was
// not decoded from bytes.
func (c *CompressionInfo) OffsetPosition(i int) int64 {
	if c.offsetsAt == 0 {
		return -1
	}
	return c.offsetsAt + 8*int64(i)
}
