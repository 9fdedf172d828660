package scrub

import (
	"fmt"
	"strings"
)

// Report says what scrub found in one sstable and what it wrote.
type Report struct {
	SSTable string   `json:"sstable"`
	Mode    string   `json:"mode"`
	From    string   `json:"from"`
	To      string   `json:"to"`
	Outputs []string `json:"outputs"` // the Data.db of every sstable written
	// Rewritten says Data.db was rewritten partition by partition (damage,
	// rows to fix, another version); otherwise Data.db, Statistics.db and
	// CompressionInfo.db are copied byte for byte and only what is derived
	// from them is rebuilt.
	Rewritten bool `json:"rewritten"`

	PartitionsKept int64 `json:"partitions_kept"`
	PartitionsLost int64 `json:"partitions_lost"`
	// Lost names every partition left out: by the key Data.db holds, or
	// where its bytes cannot say, the key Index.db (or Partitions.db's key
	// prefix) has for that place.
	Lost []Lost `json:"lost"`
	// Skipped are the byte ranges of Data.db (uncompressed positions) that
	// were stepped over to resynchronize at the next partition the index
	// knows; contiguous ones are one range, with the first one's reason.
	Skipped []ByteRange `json:"skipped"`
	// Rows lists the rows dropped, merged and fixed inside kept partitions.
	Rows []RowChange `json:"rows"`
	// OutOfOrder lists partitions (or a partition's rows from the first
	// one out of order) written to a second sstable, in order, as
	// Cassandra's scrub writes them.
	OutOfOrder []OutOfOrder `json:"out_of_order,omitempty"`
	// Components says, for each derived component, whether it was kept,
	// rebuilt because it was missing or damaged, or written anew with a
	// rewritten Data.db.
	Components []Component `json:"components"`
	// RowsFixed counts rows whose overflowed expiration was rewritten
	// (--reinsert-overflowed-ttl), DeletionTimesFixed the tombstones whose
	// invalid local deletion time was replaced.
	RowsFixed          int64 `json:"rows_fixed"`
	DeletionTimesFixed int64 `json:"deletion_times_fixed"`
	// Notes are findings that changed nothing (an index entry that
	// disagreed with Data.db, a component the output does without).
	Notes []string `json:"notes,omitempty"`
	// Unchanged (in place): nothing needed doing; the sstable is left as
	// it is.
	Unchanged bool `json:"unchanged,omitempty"`
	// Verified: every sstable written passed verify before it was moved
	// into place.
	Verified bool `json:"verified"`
	// Recovered says what was repaired in the output directory first:
	// leftovers of killed runs removed or completed.
	Recovered []string `json:"recovered,omitempty"`
	// More counts list entries left out of Lost, Rows and Notes to keep the
	// report readable for a badly damaged sstable (the counts above are
	// complete).
	More int64 `json:"more_left_out,omitempty"`
}

// Lost is one partition scrub left out.
type Lost struct {
	Key string `json:"key"` // rendered with the key type, else hex
	// KeyHex is the raw key; empty when only a key prefix is known.
	KeyHex string `json:"key_hex,omitempty"`
	// KeyFrom says where the key comes from: "Data.db", "Index.db",
	// "Rows.db", "Partitions.db (byte-comparable prefix)", or "" when no
	// component knows it.
	KeyFrom  string `json:"key_from"`
	Position int64  `json:"position"` // in uncompressed Data.db
	Reason   string `json:"reason"`
}

// ByteRange is a range of uncompressed Data.db positions.
type ByteRange struct {
	Start  int64  `json:"start"`
	End    int64  `json:"end"`
	Reason string `json:"reason"`
}

// RowChange is one row dropped, merged or fixed.
type RowChange struct {
	Key        string `json:"key"`
	Clustering string `json:"clustering"`
	Action     string `json:"action"` // "dropped", "merged", "fixed"
	Reason     string `json:"reason"`
}

// OutOfOrder is a partition (or the out-of-order rest of one) moved to
// the second sstable.
type OutOfOrder struct {
	Key      string `json:"key"`
	Position int64  `json:"position"`
	Rows     bool   `json:"rows"` // only its rows from the first out-of-order one
	Reason   string `json:"reason"`
}

// Component is one component of the output and how it was made.
type Component struct {
	Name string `json:"name"`
	// How: "kept" (the source's bytes), "rebuilt" (missing or damaged in
	// the source, made from Data.db), "written" (with a rewritten
	// Data.db).
	How string `json:"how"`
	// Why says what was wrong with the source's, for "rebuilt".
	Why string `json:"why,omitempty"`
}

// maxListed bounds Lost and Rows.
const maxListed = 10000

func (r *Report) lose(l Lost) {
	r.PartitionsLost++
	if len(r.Lost) >= maxListed {
		r.More++
		return
	}
	r.Lost = append(r.Lost, l)
}

// skip records a skipped range; one that starts where the last ended
// extends it (a damaged chunk costs several partitions, each skipped to
// the next index entry).
func (r *Report) skip(b ByteRange) {
	if n := len(r.Skipped); n > 0 && r.Skipped[n-1].End == b.Start {
		r.Skipped[n-1].End = b.End
		return
	}
	r.Skipped = append(r.Skipped, b)
}

func (r *Report) note(n string) {
	if len(r.Notes) >= maxListed {
		r.More++
		return
	}
	r.Notes = append(r.Notes, n)
}

func (r *Report) row(c RowChange) {
	if len(r.Rows) >= maxListed {
		r.More++
		return
	}
	r.Rows = append(r.Rows, c)
}

// Repaired reports whether scrub changed or lost anything: exit status 1.
func (r *Report) Repaired() bool {
	if r.PartitionsLost > 0 || len(r.Skipped) > 0 || len(r.Rows) > 0 || len(r.OutOfOrder) > 0 ||
		r.RowsFixed > 0 || r.DeletionTimesFixed > 0 || r.More > 0 {
		return true
	}
	for _, c := range r.Components {
		if c.How == "rebuilt" {
			return true
		}
	}
	return false
}

// Summary is the report's one-line verdict.
func (r *Report) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d partitions kept, %d lost", r.PartitionsKept, r.PartitionsLost)
	var rebuilt []string
	for _, c := range r.Components {
		if c.How == "rebuilt" {
			rebuilt = append(rebuilt, c.Name)
		}
	}
	if len(rebuilt) > 0 {
		fmt.Fprintf(&b, "; rebuilt %s", strings.Join(rebuilt, ", "))
	}
	var dropped, merged int
	for _, c := range r.Rows {
		switch c.Action {
		case "dropped":
			dropped++
		case "merged":
			merged++
		}
	}
	if dropped > 0 {
		fmt.Fprintf(&b, "; %d rows dropped", dropped)
	}
	if merged > 0 {
		fmt.Fprintf(&b, "; %d duplicate rows merged", merged)
	}
	if r.RowsFixed > 0 {
		fmt.Fprintf(&b, "; %d rows with an overflowed expiration reinserted", r.RowsFixed)
	}
	if r.DeletionTimesFixed > 0 {
		fmt.Fprintf(&b, "; %d invalid deletion times replaced", r.DeletionTimesFixed)
	}
	if len(r.OutOfOrder) > 0 {
		fmt.Fprintf(&b, "; %d out of order, written in order to a second sstable", len(r.OutOfOrder))
	}
	return b.String()
}
