// Package reader is the bottom layer of sstabletool: it turns the bytes of
// sstable components on disk into positions of uncompressed Data.db, and
// checks them against the checksums Cassandra stored beside them.
//
// It knows nothing about partitions or rows. It provides:
//
//   - Open: read-only access to a component file, either memory-mapped
//     (zero-copy through Bytes) or through os.File.ReadAt with a small buffer;
//   - CompressionInfo: the CompressionInfo.db codec (decode and byte-exact
//     encode);
//   - Compressor: the chunk codecs Cassandra names in CompressionInfo.db
//     (LZ4, Snappy, Deflate, Zstd, Noop), built on pierrec/lz4 and
//     klauspost/compress;
//   - Data and Cursor: Data.db as uncompressed positions, with per-chunk CRC
//     verification and a sequential cursor for the partition decoder;
//   - DigestCRC32, ParseDigestFile, DecodeChecksums, VerifyChunks,
//     VerifyChunksDigest: whole-file and per-chunk checksums (Digest.crc32,
//     CRC.db, compressed chunk CRCs; each chunk's CRC taken once per Data,
//     and the whole file's put together from the chunks').
//
// Every decoding failure is a *corrupt.Error naming the file, component and
// byte offset. Lengths and counts read from disk are checked against the
// bytes actually present before anything is allocated.
//
// Three small things are hand-written although they look like library
// work: Java's "modified UTF-8" (DataOutput.writeUTF) has no Go library in
// go.mod and needs only a few lines; hash/crc32 cannot combine two CRCs
// (zlib's crc32_combine, a few lines of polynomial arithmetic); and the
// chunk cursor is the hot path
// of every scan, where a generic bufio.Reader would copy every byte once
// more and could not hand out zero-copy slices of a mapping.
package reader
