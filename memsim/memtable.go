package memsim

import (
	"bytes"
	"fmt"
	"strings"
	"unsafe"

	"github.com/sstabletool/sstabletool/workload"
)

var (
	sizeofPartition = unsafe.Sizeof(partition{})
	sizeofRow       = unsafe.Sizeof(row{})
	sizeofCell      = unsafe.Sizeof(cell{})
)

// Kind names a memtable implementation.
type Kind int

const (
	SkipList    Kind = iota // SkipListMemtable: ConcurrentSkipListMap of AtomicBTreePartition
	Trie                    // TrieMemtable: sharded InMemoryTrie of BTreePartitionData
	HashOrdered             // CASSANDRA-7282: token-ordered list with a hash index beside it
)

var kindNames = [...]string{"skiplist", "trie", "hashordered"}

func (k Kind) String() string { return kindNames[k] }

// Kinds lists every memtable kind.
var Kinds = []Kind{SkipList, Trie, HashOrdered}

// ParseKind reads a memtable name.
func ParseKind(s string) (Kind, error) {
	for i, n := range kindNames {
		if strings.EqualFold(s, n) {
			return Kind(i), nil
		}
	}
	return 0, fmt.Errorf("unknown memtable %q (want %s)", s, strings.Join(kindNames[:], ", "))
}

// index maps partition keys to partition ids; it is what differs between
// the memtable kinds.
type index interface {
	// upsert returns the id of the partition with this key, calling create
	// to make one when absent.
	upsert(tok uint64, key []byte, create func() uint32) (id uint32, created bool)
	get(tok uint64, key []byte) (uint32, bool)
	goBytes() int64
}

// Memtable is one Go memtable: an index of partitions over a store of
// rows and cells, with Cassandra's accounting for every allocation type.
type Memtable struct {
	kind       Kind
	part       Partitioner
	st         *store
	idx        index
	trie       *shardedTrie // idx of a Trie memtable, nil otherwise
	acct       *Account
	overhead   [numAllocTypes]int64 // per new partition, on heap
	partitions int64
	ops        int64

	curKey   []byte
	curTok   uint64
	createFn func() uint32 // m.create, made once: a method value per call would allocate

	batchToks  []uint64
	batchKeys  [][]byte
	batchPreds [batchMax][maxLevel]uint32
}

// Config selects what a Memtable models.
type Config struct {
	Kind        Kind
	Partitioner Partitioner
	JDK         int    // 11 or 17
	Cassandra   string // "4.1" or "5.0"
	Shards      int    // TrieMemtable shards (default 1)
}

// NewMemtable builds an empty memtable for the given schema.
func NewMemtable(cfg Config, schema *workload.Schema) (*Memtable, error) {
	l, err := newLayout(cfg)
	if err != nil {
		return nil, err
	}
	acct := &Account{L: l}
	m := &Memtable{kind: cfg.Kind, part: cfg.Partitioner, acct: acct}
	m.st = newStore(schema, acct, cfg.Kind == Trie)
	m.createFn = m.create
	switch cfg.Kind {
	case SkipList:
		m.idx = newSkipList(m.st)
		for _, t := range AllocTypes {
			m.overhead[t] = RowOverhead(&acct.L, t, SkipListEntry(&acct.L))
		}
	case HashOrdered:
		m.idx = newHashOrdered(m.st)
		for _, t := range AllocTypes {
			m.overhead[t] = RowOverhead(&acct.L, t, HashOrderedEntry(&acct.L))
		}
	case Trie:
		shards := max(cfg.Shards, 1)
		m.trie = newShardedTrie(m.st, cfg.Partitioner, shards, acct)
		m.idx = m.trie
		for _, t := range AllocTypes {
			m.overhead[t] = acct.L.BTreePartitionData // BTreePartitionUpdater.mergePartitions of a new partition
		}
	default:
		return nil, fmt.Errorf("unknown memtable kind %d", cfg.Kind)
	}
	return m, nil
}

// Kind returns the memtable's kind.
func (m *Memtable) Kind() Kind { return m.kind }

// Account returns the accounting so far.
func (m *Memtable) Account() *Account { return m.acct }

// Partitions returns the number of partitions held.
func (m *Memtable) Partitions() int64 { return m.partitions }

// Ops returns the number of writes applied.
func (m *Memtable) Ops() int64 { return m.ops }

// GoBytes is what the Go structure holds: its chunks and index.
func (m *Memtable) GoBytes() int64 { return m.st.goBytes() + m.idx.goBytes() }

func (m *Memtable) create() uint32 {
	id := m.st.newPartition(m.curKey)
	m.partitions++
	return id
}

// Apply replays one write.
func (m *Memtable) Apply(op *workload.Op) error {
	if op.Kind != workload.OpWrite {
		return fmt.Errorf("Apply: op is not a write")
	}
	if len(op.Key) == 0 {
		return fmt.Errorf("Apply: empty partition key")
	}
	if len(op.Key) > 0xFFFF {
		return fmt.Errorf("Apply: partition key of %d bytes exceeds 65535", len(op.Key))
	}
	m.curKey, m.curTok = op.Key, m.part.orderToken(op.Key)
	if m.trie != nil {
		if err := m.trie.checkRoom(m.curTok); err != nil {
			return err
		}
	}
	id, created := m.idx.upsert(m.curTok, op.Key, m.createFn)
	return m.applyTo(id, created, op)
}

func (m *Memtable) applyTo(id uint32, created bool, op *workload.Op) error {
	if created {
		a := m.acct
		a.perType(m.overhead)
		if m.kind != Trie {
			a.heap(TokenHeap(&a.L, m.part, int64(len(op.Key))))
			a.partitionKey(int64(len(op.Key)))
			a.Live += 8 // SkipListMemtable.put: initialSize
		}
	}
	m.ops++
	return m.st.apply(id, op)
}

// ApplyBatch applies ops in order, calling after(i) once op i is applied.
// For the skip list the partition searches of the whole batch run
// interleaved first (see skipList.searchBatch); the outcome is exactly
// that of applying the ops one by one.
func (m *Memtable) ApplyBatch(ops []workload.Op, after func(i int)) error {
	sl, ok := m.idx.(*skipList)
	if !ok || len(ops) < 2 {
		for i := range ops {
			if err := m.Apply(&ops[i]); err != nil {
				return err
			}
			after(i)
		}
		return nil
	}
	for start := 0; start < len(ops); start += batchMax {
		batch := ops[start:min(start+batchMax, len(ops))]
		toks := m.batchToks[:0]
		keys := m.batchKeys[:0]
		for i := range batch {
			if len(batch[i].Key) == 0 || len(batch[i].Key) > 0xFFFF || batch[i].Kind != workload.OpWrite {
				// Apply the ops before the bad one, as one by one would,
				// then let Apply report it.
				for j := 0; j < i; j++ {
					if err := m.Apply(&batch[j]); err != nil {
						return err
					}
					after(start + j)
				}
				return m.Apply(&batch[i])
			}
			toks = append(toks, m.part.orderToken(batch[i].Key))
			keys = append(keys, batch[i].Key)
		}
		m.batchToks, m.batchKeys = toks, keys
		sl.searchBatch(toks, keys, m.batchPreds[:len(batch)])
		for i := range batch {
			op := &batch[i]
			m.curKey, m.curTok = op.Key, toks[i]
			id, created := sl.upsertHint(toks[i], op.Key, &m.batchPreds[i], m.createFn)
			if err := m.applyTo(id, created, op); err != nil {
				return err
			}
			after(start + i)
		}
	}
	return nil
}

// Read looks the key up and reads the whole partition, returning its live
// row count and whether it exists.
func (m *Memtable) Read(key []byte) (rows int, found bool) {
	id, ok := m.idx.get(m.part.orderToken(key), key)
	if !ok {
		return 0, false
	}
	rows, _ = m.st.read(id)
	return rows, true
}

// cmpKey orders (token, key) pairs as DecoratedKey.compareTo does.
func cmpKey(ta uint64, ka []byte, tb uint64, kb []byte) int {
	if ta != tb {
		if ta < tb {
			return -1
		}
		return 1
	}
	return bytes.Compare(ka, kb)
}
