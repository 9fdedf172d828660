package convert

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/words"
)

// A rewrite of Data.db (convert, upgrade, scrub, and what goes through
// them) moves every row: SAI's files map row ids, SASI's positions in
// Index.db, so none of the source's can describe the sstable written, and
// none is carried over. Cassandra builds an index for an sstable that has
// none of its files when it loads it:
//
//   - SAI: at startup StorageAttachedIndex.getInitializationTask runs
//     startInitialBuild, whose findNonIndexedSSTables takes every live
//     sstable without the index's completion markers (GroupComplete and
//     ColumnComplete, V1OnDiskFormat.isPerColumnIndexBuildComplete) and
//     builds them (StorageAttachedIndexBuilder); the index is not
//     queryable until then;
//   - SASI: when the index is opened at startup, SASIIndex's constructor
//     has DataTracker.update look for each sstable's SI_<index>.db and
//     submits a SASIIndexBuilder for those without one;
//   - Cassandra's own secondary indexes are tables (in .<index>
//     directories): they hold the indexed values and the table's primary
//     keys, not positions in its files, so a rewrite of the table leaves
//     them right; they are sstables like any other, which upgrade and
//     convert -r rewrite too.
//
// What Cassandra must never find is an index file beside a Data.db it
// was not built from: SAI checks only the framing and the markers, SASI
// only that the file opens, and both would answer queries from it. The
// writers here never leave one: an output's name is checked free of any
// file first (writer.NewStaging, or a fresh id for upgrade), and a
// replaced sstable's files all go with it.

// IndexNote is what a rewrite does to one index of one table.
type IndexNote struct {
	Dir      string `json:"dir"` // the table's directory
	Keyspace string `json:"keyspace,omitempty"`
	Table    string `json:"table,omitempty"`
	Index    string `json:"index"`
	// Kind is SAI, SASI, or "secondary index table" (Cassandra's own).
	Kind string `json:"kind"`
	// Covers counts the table's sstables with files of the index (for a
	// secondary index table, its sstables).
	Covers int `json:"sstables_covered"`
	// Rewritten counts those the rewrite replaces, and DataBytes their
	// Data.db bytes: what Cassandra reads to build the index for them.
	Rewritten int   `json:"sstables_rewritten"`
	DataBytes int64 `json:"bytes_to_index"`
	// Done says, once a rewrite whose outputs are not one per source
	// (split, filter) has run, what it did to the sstables Rewritten
	// counts; nil before, and for the other rewrites.
	Done *IndexDone `json:"done,omitempty"`

	// sources are the Data.db paths of the sstables Rewritten counts.
	sources []string
}

// IndexDone is what a split or filter did to the sstables an index note
// counted as rewritten: how many it replaced (or copied, out of place; a
// failure leaves an sstable and its files as they were) and how many
// sstables it wrote for them, none with the index's files.
type IndexDone struct {
	Rewritten int `json:"sstables_rewritten"`
	Written   int `json:"sstables_written"`
}

// Sources are the Data.db paths, as the rewrite named them, of the
// sstables the note counts as rewritten.
func (n IndexNote) Sources() []string { return n.sources }

// NoteWords says how an IndexNote's text names the rewrite.
type NoteWords struct {
	// What is the rewrite ("the upgrade", "the split").
	What string
	// InPlace: it replaces the sstables where they are; else its outputs
	// are copies elsewhere, loaded later.
	InPlace bool
	// Verb is what the rewrite does to each sstable it takes ("splits",
	// "filters") when its outputs are not one per source, so the note
	// counts the sources and says what becomes of the sstables it leaves
	// as they are; "" for a rewrite of each into one (convert, upgrade,
	// scrub).
	Verb string
	// AtMost: the outputs may hold less than the sources (a filter), so
	// the bytes to index are at most the sources'.
	AtMost bool
}

// Name is the index as nodetool names it: "ks.t.idx", or the index in its
// directory when the directory does not say which table.
func (n IndexNote) Name() string {
	if n.Keyspace != "" && n.Table != "" {
		return n.Keyspace + "." + n.Table + "." + n.Index
	}
	return n.Index + " (in " + n.Dir + ")"
}

// Text says what happens to the index; what is the rewrite ("the
// upgrade", "the conversion", "the scrub"), and inPlace whether it
// replaces the sstables where they are (else its outputs are copies
// elsewhere, loaded later).
func (n IndexNote) Text(what string, inPlace bool) string {
	return n.TextWith(NoteWords{What: what, InPlace: inPlace})
}

// rebuild is the nodetool command that builds the index at once.
func (n IndexNote) rebuild() string {
	if n.Keyspace == "" || n.Table == "" {
		return "`nodetool rebuild_index KEYSPACE TABLE " + n.Index + "`"
	}
	return "`nodetool rebuild_index " + n.Keyspace + " " + n.Table + " " + n.Index + "`"
}

// TextWith is Text for a rewrite that w names.
func (n IndexNote) TextWith(w NoteWords) string {
	what, inPlace := w.What, w.InPlace
	covers := fmt.Sprintf("index %s (%s) covers %s", n.Name(), n.Kind, words.Plural(n.Covers, "sstable"))
	rebuild := n.rebuild()
	if w.Verb != "" && n.Kind != indexTable {
		return n.severalText(w, covers)
	}
	them := "the " + words.Plural(n.Rewritten, "sstable") + " it rewrites"
	if !inPlace {
		them = "the " + words.Plural(n.Rewritten, "sstable") + " it writes"
	}
	when := "at startup"
	if !inPlace {
		when = "when it loads them (at startup, or nodetool import or refresh)"
	}
	switch n.Kind {
	case string(format.IndexSAI):
		return fmt.Sprintf("%s; after %s Cassandra rebuilds it %s for %s (%s of Data.db to index; until then the index is not queryable), or run %s",
			covers, what, when, them, words.PluralGrouped(n.DataBytes, "byte"), rebuild)
	case string(format.IndexSASI):
		return fmt.Sprintf("%s; after %s Cassandra builds it %s for %s, which have no SI_%s.db (%s of Data.db to index; queries miss their rows until then), or run %s",
			covers, what, when, them, n.Index, words.PluralGrouped(n.DataBytes, "byte"), rebuild)
	}
	tail := "its sstables are rewritten too"
	switch {
	case w.Verb != "" && n.Rewritten == 0:
		tail = fmt.Sprintf("%s rewrites none of its sstables", what)
	case w.Verb != "" && inPlace:
		tail = fmt.Sprintf("%s %s %s of its sstables too", what, w.Verb, words.Plural(n.Rewritten, "sstable"))
	case w.Verb != "":
		tail = fmt.Sprintf("%s %s %s of its sstables too, into .<index>/ under the output directory", what, w.Verb, words.Plural(n.Rewritten, "sstable"))
	case n.Rewritten == 0:
		tail = "its sstables are not among those rewritten (Cassandra reads them as they are; name the table's directory, with -r for convert, to rewrite them too)"
	case !inPlace:
		tail = "its sstables are written into .<index>/ under the output directory, where Cassandra looks for them"
	}
	return fmt.Sprintf("secondary index table %s (.%s/, %s): it holds the table's primary keys, not positions in its files, so %s leaves it right; %s",
		n.Name(), n.Index, words.Plural(n.Covers, "sstable"), what, tail)
}

// severalText is TextWith for an SAI or SASI index and a rewrite whose
// outputs are not one per source (w.Verb): how many of the sstables the
// index covers it rewrites, or that it rewrites none and the index stays
// as it is.
func (n IndexNote) severalText(w NoteWords, covers string) string {
	if n.Rewritten == 0 {
		if w.InPlace {
			return fmt.Sprintf("%s; %s rewrites none of them, so their index files stay and the index stays valid", covers, w.What)
		}
		return fmt.Sprintf("%s; %s writes nothing from them, so there is nothing to index", covers, w.What)
	}
	them := fmt.Sprintf("the sstables written in place of the %s it %s", words.Plural(n.Rewritten, "sstable"), w.Verb)
	when := "at startup"
	if !w.InPlace {
		them = fmt.Sprintf("the sstables written from the %s it %s", words.Plural(n.Rewritten, "sstable"), w.Verb)
		when = "when it loads them (at startup, or nodetool import or refresh)"
	}
	var bytes []string
	if rest := n.Covers - n.Rewritten; rest > 0 && w.InPlace {
		if rest == 1 {
			bytes = append(bytes, "the other keeps its files")
		} else {
			bytes = append(bytes, fmt.Sprintf("the other %d keep theirs", rest))
		}
	}
	size := words.PluralGrouped(n.DataBytes, "byte") + " of Data.db to index"
	if w.AtMost {
		size = "at most " + size
	}
	bytes = append(bytes, size)
	if n.Kind == string(format.IndexSASI) {
		return fmt.Sprintf("%s; after %s Cassandra builds it %s for %s, which have no SI_%s.db (%s; queries miss their rows until then), or run %s",
			covers, w.What, when, them, n.Index, strings.Join(bytes, "; "), n.rebuild())
	}
	return fmt.Sprintf("%s; after %s Cassandra rebuilds it %s for %s (%s; until then the index is not queryable), or run %s",
		covers, w.What, when, them, strings.Join(bytes, "; "), n.rebuild())
}

// DoneText says, once a split or filter has run (Done), what it wrote in
// place of the sstables that lost the index's files; "" when there is
// nothing to say (a secondary index table, or nothing rewritten).
func (n IndexNote) DoneText(w NoteWords) string {
	if n.Done == nil || n.Done.Rewritten == 0 || n.Kind == indexTable {
		return ""
	}
	from, when := "in place of", "at startup"
	if !w.InPlace {
		from, when = "from", "when it loads them"
	}
	if n.Done.Written == 0 {
		return fmt.Sprintf("index %s (%s): %s wrote no sstable %s %s (every partition dropped): nothing to index",
			n.Name(), n.Kind, w.What, from, words.Plural(n.Done.Rewritten, "sstable"))
	}
	return fmt.Sprintf("index %s (%s): %s wrote %s without its files %s %d; Cassandra builds it for them %s, or run %s",
		n.Name(), n.Kind, w.What, words.Plural(n.Done.Written, "sstable"), from, n.Done.Rewritten, when, n.rebuild())
}

// indexTable is IndexNote.Kind for Cassandra's own secondary indexes.
const indexTable = "secondary index table"

// IndexNotes says, for the sstables a rewrite replaces (Data.db paths),
// which indexes of their tables lose files and how much they cover, and
// which of them are secondary index tables. It reads each of their
// directories once.
func IndexNotes(rewritten []string) ([]IndexNote, error) {
	return IndexNotesFor(rewritten, nil)
}

// IndexNotesFor is IndexNotes for a rewrite that takes the sstables
// considered and replaces those rewrites accepts (nil: all): an index
// that covers sstables considered but none rewritten has a note too
// (Rewritten 0: it stays as it is), as split and filter say of the
// sstables they leave alone.
func IndexNotesFor(considered []string, rewrites func(data string) bool) ([]IndexNote, error) {
	byDir := map[string]map[string]string{} // dir -> prefix considered -> its Data.db path, "" when not rewritten
	var dirs []string
	for _, p := range considered {
		d, _, err := format.ParseDescriptor(p)
		if err != nil {
			return nil, err
		}
		if byDir[d.Dir] == nil {
			byDir[d.Dir] = map[string]string{}
			dirs = append(dirs, d.Dir)
		}
		byDir[d.Dir][d.Prefix()] = ""
		if rewrites == nil || rewrites(p) {
			byDir[d.Dir][d.Prefix()] = p
		}
	}
	var out []IndexNote
	for _, dir := range dirs {
		notes, err := dirIndexNotes(dir, byDir[dir], byDir)
		if err != nil {
			return nil, err
		}
		out = append(out, notes...)
	}
	return out, nil
}

// dirIndexNotes is IndexNotesFor for one directory: considered maps the
// prefixes of the sstables considered there to their Data.db path when
// they are rewritten, "" when not.
func dirIndexNotes(dir string, considered map[string]string, all map[string]map[string]string) ([]IndexNote, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	td := format.TableOf(dir)
	ks, table := td.Keyspace, td.Table
	if !td.HasID() {
		ks, table = "", ""
	}
	if ix, base, ok := format.IndexTableOf(dir); ok {
		// A secondary index's own table: its sstables are the index.
		n := IndexNote{Dir: base, Index: ix, Kind: indexTable}
		if btd := format.TableOf(base); btd.HasID() {
			n.Keyspace, n.Table = btd.Keyspace, btd.Table
		}
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), "-"+format.ComponentData) {
				n.Covers++
				if d, _, err := format.ParseDescriptor(filepath.Join(dir, e.Name())); err == nil && considered[d.Prefix()] != "" {
					n.Rewritten++
					n.sources = append(n.sources, considered[d.Prefix()])
				}
			}
		}
		return []IndexNote{n}, nil
	}
	var out []IndexNote
	for _, e := range ents {
		// A secondary index table the rewrite leaves out.
		sub := filepath.Join(dir, e.Name())
		if ix, _, ok := format.IndexTableOf(sub); ok && e.IsDir() && all[sub] == nil {
			subEnts, err := os.ReadDir(sub)
			if err != nil {
				return nil, err
			}
			n := IndexNote{Dir: dir, Keyspace: ks, Table: table, Index: ix, Kind: indexTable}
			for _, se := range subEnts {
				if strings.HasSuffix(se.Name(), "-"+format.ComponentData) {
					n.Covers++
				}
			}
			if n.Covers > 0 {
				out = append(out, n)
			}
		}
	}
	type key struct{ kind, name string }
	covers := map[key]map[string]bool{}
	var keys []key
	dataSize := map[string]int64{}
	for _, e := range ents {
		d, comp, err := format.ParseDescriptor(filepath.Join(dir, e.Name()))
		if err != nil || e.IsDir() {
			continue
		}
		if comp == format.ComponentData {
			if fi, err := e.Info(); err == nil {
				dataSize[d.Prefix()] = fi.Size()
			}
			continue
		}
		c, ok := format.ParseIndexComponent(comp)
		if !ok || c.PerSSTable() {
			continue
		}
		k := key{string(c.Kind), c.Index}
		if covers[k] == nil {
			covers[k] = map[string]bool{}
			keys = append(keys, k)
		}
		covers[k][d.Prefix()] = true
	}
	slices.SortFunc(keys, func(a, b key) int { return strings.Compare(a.kind+a.name, b.kind+b.name) })
	for _, k := range keys {
		n := IndexNote{Dir: dir, Keyspace: ks, Table: table, Index: k.name, Kind: k.kind}
		touched := false
		for _, prefix := range slices.Sorted(maps.Keys(covers[k])) {
			if _, live := dataSize[prefix]; !live {
				continue // files of no sstable: not the rewrite's business
			}
			n.Covers++
			p, ok := considered[prefix]
			touched = touched || ok
			if p != "" {
				n.Rewritten++
				n.DataBytes += dataSize[prefix]
				n.sources = append(n.sources, p)
			}
		}
		if touched {
			out = append(out, n)
		}
	}
	return out, nil
}
