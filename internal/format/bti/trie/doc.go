// Package trie reads and writes the on-disk tries of Cassandra's BTI sstable
// format (io/tries in Cassandra 5.0): the node encodings of TrieNode, the
// page-aware bottom-up layout of IncrementalTrieWriterPageAware, and the
// walks Walker and ValueIterator perform (exact follow, floor, in-order
// iteration from a bound).
//
// The package knows nothing about what a payload means. A node carries four
// payload bits; when they are non-zero its payload starts right after the
// node and the index that owns the trie (Partitions.db, Rows.db in package
// bti) decodes it. Writers describe their payloads with a PayloadCodec.
//
// On disk every pointer is a distance back from the node that holds it:
// tries are written bottom-up, so a child always precedes its parent. The
// reader relies on that: a pointer that does not point strictly backwards
// is corruption, which also rules out cycles.
package trie
