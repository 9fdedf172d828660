// Package tui is `sstabletool browse`: a terminal program that shows
// sstables, their partitions (largest first), a partition's rows and cells,
// and the raw bytes of any partition or row with every field labelled.
// Run is its one entry; the model, the views and the data layer are the
// application's own, under internal/tui.
package tui

import (
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/inspect"
	"github.com/sstabletool/sstabletool/internal/tui/app"
	"github.com/sstabletool/sstabletool/internal/tui/catalog"
	"github.com/sstabletool/sstabletool/reader"
)

// Options configures Run.
type Options struct {
	Access reader.Access
	// NoMouse leaves the mouse to the terminal (text selection).
	NoMouse bool
	// Merged opens the merge of the first sstable's table (its sstables
	// among those given, as Cassandra's read path merges them) on top:
	// browse --merge.
	Merged bool
	// MergeNow is the merged views' time (browse --now), seconds since
	// the epoch: what has expired. Zero is the current time.
	MergeNow int64
	// Unreadable are sstables the caller already knows cannot be opened
	// (found by a scan but refused); they are listed with the others.
	Unreadable []Unreadable
	// Schema, when set, says what an sstable's table schema knows and the
	// sstable does not (ok false: nothing): the names of its key and
	// clustering columns, shown in the partition lists' headers and rows'
	// clusterings, and its dropped columns, which a merged view does not
	// read (merge.Table.DropColumns). The command passes its schema's: a
	// node's system_schema, --schema.
	Schema func(s *sstable.SSTable) (schema Schema, ok bool)
}

// Schema is what Options.Schema says of a table.
type Schema struct {
	Keyspace, Table          string
	PartitionKey, Clustering []string
	// DroppedTimes are the dropped columns' drop times, microseconds, by
	// name.
	DroppedTimes map[string]int64
}

// Unreadable is an sstable that could not be opened: Options lists those
// the caller knows of, Run returns every one.
type Unreadable struct {
	Path string // the Data.db path, or the path given
	Err  error
}

// Run opens paths (components of sstables) and runs the browser on the
// terminal until the user quits. It returns the sstables that could not be
// opened, which the browser listed with their errors (the caller reports
// them again once the screen is back); an error when none could be.
func Run(paths []string, o Options) ([]Unreadable, error) {
	known := make([]catalog.Unreadable, len(o.Unreadable))
	for i, u := range o.Unreadable {
		known[i] = catalog.Unreadable{Path: u.Path, Err: u.Err}
	}
	var schema func(*sstable.SSTable) *catalog.Schema
	if o.Schema != nil {
		schema = func(s *sstable.SSTable) *catalog.Schema {
			sch, ok := o.Schema(s)
			if !ok {
				return nil
			}
			return &catalog.Schema{Names: inspect.Names{Keyspace: sch.Keyspace, Table: sch.Table, PartitionKey: sch.PartitionKey, Clustering: sch.Clustering},
				DroppedTimes: sch.DroppedTimes}
		}
	}
	bad, err := app.Run(paths, o.Access, !o.NoMouse, o.Merged, o.MergeNow, known, schema)
	out := make([]Unreadable, len(bad))
	for i, u := range bad {
		out[i] = Unreadable{Path: u.Path, Err: u.Err}
	}
	return out, err
}
