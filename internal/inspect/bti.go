package inspect

import (
	"math"
	"os"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/format/bti/trie"
)

// TrieInfo describes the nodes of a BTI trie (format/bti/trie.Stats).
type TrieInfo struct {
	Nodes int64 `json:"nodes"`
	// NodeTypes counts the nodes of each type that occurs, by Cassandra's
	// name (TrieNode.Types: PAYLOAD_ONLY, SPARSE_8, DENSE_16, ...).
	NodeTypes    map[string]int64 `json:"node_types"`
	Keys         int64            `json:"keys"`      // nodes with a payload
	MaxDepth     int              `json:"max_depth"` // longest path from the root, in bytes
	NodeBytes    int64            `json:"node_bytes"`
	PayloadBytes int64            `json:"payload_bytes"`
	BytesPerKey  float64          `json:"bytes_per_key"`
	Pages        int64            `json:"pages,omitempty"`     // distinct 4 KiB pages holding nodes (Partitions.db)
	PageCrossing int64            `json:"page_crossing_nodes"` // nodes spanning a page boundary
}

// PartitionIndexInfo describes Partitions.db: the trie of partition keys
// (shortest unique prefixes of their byte-comparable forms).
type PartitionIndexInfo struct {
	SizeOnDisk int64    `json:"size_on_disk"`
	KeyCount   int64    `json:"key_count"`
	FirstKey   string   `json:"first_key"`
	LastKey    string   `json:"last_key"`
	Trie       TrieInfo `json:"trie"`
}

// RowIndexInfo describes Rows.db: one entry per partition large enough to
// have a row index (the others point straight into Data.db), each with a
// trie of index blocks.
type RowIndexInfo struct {
	SizeOnDisk int64 `json:"size_on_disk"`
	// Entries is the number of partitions with a row index.
	Entries int64 `json:"entries"`
	// Blocks is the number of index blocks over all entries; per entry
	// they range from MinBlocks to MaxBlocks.
	Blocks    int64 `json:"blocks"`
	MinBlocks int64 `json:"min_blocks"`
	MaxBlocks int64 `json:"max_blocks"`
	// Trie sums the row index tries of all entries (MaxDepth: the
	// deepest; pages are not counted, entries share them; BytesPerKey is
	// per block: each trie also has a closing payload, counted in Keys).
	Trie TrieInfo `json:"trie"`
}

func trieInfo(st trie.Stats) TrieInfo {
	ti := TrieInfo{Nodes: st.Nodes, NodeTypes: map[string]int64{}, Keys: st.Keys, MaxDepth: st.MaxDepth,
		NodeBytes: st.NodeBytes, PayloadBytes: st.PayloadBytes, BytesPerKey: st.BytesPerKey(),
		Pages: st.Pages, PageCrossing: st.PageCrossing}
	for t, n := range st.ByType {
		if n > 0 {
			ti.NodeTypes[trie.NodeType(t).String()] = n
		}
	}
	return ti
}

func fileSize(p string) int64 {
	if fi, err := os.Stat(p); err == nil {
		return fi.Size()
	}
	return 0
}

// readTries fills the BTI facts of m from Partitions.db and Rows.db.
func readTries(s *sstable.SSTable, m *Metadata) error {
	pi := s.Partitions()
	if pi == nil {
		return nil
	}
	st, err := pi.Stats()
	if err != nil {
		return err
	}
	m.PartitionIndex = &PartitionIndexInfo{SizeOnDisk: fileSize(s.Path(format.ComponentPartitions)), KeyCount: pi.KeyCount,
		FirstKey: FormatKey(s.KeyType(), pi.FirstKey), LastKey: FormatKey(s.KeyType(), pi.LastKey), Trie: trieInfo(st)}
	if m.KeyRange == nil {
		m.KeyRange = keyRange(s, pi.FirstKey, pi.LastKey, format.ComponentPartitions)
	}
	ri := s.Rows()
	if ri == nil {
		return nil
	}
	info := &RowIndexInfo{SizeOnDisk: fileSize(s.Path(format.ComponentRows)), MinBlocks: math.MaxInt64}
	var sum trie.Stats
	it := pi.Iter()
	for ok := it.First(); ok; ok = it.Next() {
		e := it.Entry()
		if !e.InRowIndex() {
			continue
		}
		re, err := ri.Entry(e.RowIndexPos())
		if err != nil {
			return err
		}
		info.Entries++
		b := int64(re.BlockCount)
		info.Blocks += b
		info.MinBlocks = min(info.MinBlocks, b)
		info.MaxBlocks = max(info.MaxBlocks, b)
		rs, err := ri.Stats(re)
		if err != nil {
			return err
		}
		sum.Nodes += rs.Nodes
		for t := range rs.ByType {
			sum.ByType[t] += rs.ByType[t]
		}
		sum.Keys += rs.Keys
		sum.KeyBytes += rs.KeyBytes
		sum.NodeBytes += rs.NodeBytes
		sum.PayloadBytes += rs.PayloadBytes
		sum.PageCrossing += rs.PageCrossing
		sum.MaxDepth = max(sum.MaxDepth, rs.MaxDepth)
	}
	if err := it.Err(); err != nil {
		return err
	}
	if info.Entries == 0 {
		info.MinBlocks = 0
	}
	info.Trie = trieInfo(sum)
	// Each entry's trie also holds a closing payload past its last block:
	// bytes per block are per block, not per payload.
	info.Trie.BytesPerKey = 0
	if info.Blocks > 0 {
		info.Trie.BytesPerKey = float64(sum.NodeBytes+sum.PayloadBytes) / float64(info.Blocks)
	}
	m.RowIndex = info
	return nil
}
