package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/inspect"
	"github.com/sstabletool/sstabletool/nodeschema"
)

var (
	schemaFlag = &cli.StringFlag{Name: "schema", Usage: "a CQL schema `FILE`: cqlsh DESCRIBE SCHEMA, DESCRIBE KEYSPACE or DESCRIBE TABLE output; " +
		"names the key columns and cross-checks the types. The table is the one the sstable's directory names " +
		"(<keyspace>/<table>-<id>/), or --table. Takes precedence over --schema-from and over the data directory's own schema"}
	schemaFromFlag = &cli.StringFlag{Name: "schema-from", Usage: "read the schema from the system_schema of data directory `DIR` " +
		"(another node's, or a copy of one) rather than from the data directory the sstables lie in " +
		"(<data>/<keyspace>/<table>-<id>/, whose <data>/system_schema is read by default)"}
	tableFlag = &cli.StringFlag{Name: "table", Usage: "with --schema or --schema-from: the table (or view) to use, as `KEYSPACE.TABLE` or TABLE, when the sstable's directory does not name it"}
)

// withSchemaFrom gives every command that takes --schema the
// --schema-from flag beside it.
func withSchemaFrom(c *cli.Command) {
	if i := slices.Index(c.Flags, cli.Flag(schemaFlag)); i >= 0 {
		c.Flags = slices.Insert(c.Flags, i+1, cli.Flag(schemaFromFlag))
	}
}

// loadSchema chooses the command's schema source: --schema FILE, else
// --schema-from DIR, else the system_schema of the data directory each
// sstable lies in (<data>/<keyspace>/<table>-<id>/), read when an sstable
// first needs it; where none is found the sstables keep their headers'
// names, as without a schema. A node's schema is named on stderr when it
// is first used, with what of it could not be read. Its errors are bad
// usage: no sstable can be checked against a file that cannot be read.
func loadSchema(c *cli.Context) (*inspect.SchemaSource, error) {
	o, err := openOptions(c)
	if err != nil {
		return nil, err
	}
	if path := c.String("schema"); path != "" {
		if c.String("schema-from") != "" {
			fmt.Fprintf(stderr, "sstabletool: --schema %s takes precedence over --schema-from %s\n", path, c.String("schema-from"))
		}
		sf, err := inspect.ReadSchemaFile(path, c.String("table"))
		if err != nil {
			return nil, usageError("%v", err)
		}
		fmt.Fprintf(stderr, "schema: %s\n", path)
		sf.OnWarning = (&nodeSchemas{}).warn // a secondary index's own table: the header's names
		return sf, nil
	}
	nodes := &nodeSchemas{o: o, read: map[string]*inspect.NodeSchema{}}
	var sf *inspect.SchemaSource
	if dir := c.String("schema-from"); dir != "" {
		n, err := nodes.readAll(dir)
		if err != nil {
			return nil, usageError("--schema-from %v", err)
		}
		sf, err = inspect.NodeSchemaSource(func(format.TableDir) *inspect.NodeSchema { return n }, n, c.String("table"))
		if err != nil {
			return nil, usageError("%v", err)
		}
	} else {
		if c.IsSet("table") {
			return nil, usageError("--table needs --schema FILE or --schema-from DIR")
		}
		sf, _ = inspect.NodeSchemaSource(nodes.find, nil, "")
	}
	sf.OnWarning = nodes.warn
	return sf, nil
}

// nodeSchemas reads nodes' schemas for a command, once each, and says on
// stderr which one is used and what of it could not be read.
type nodeSchemas struct {
	o    sstable.Options
	mu   sync.Mutex
	read map[string]*inspect.NodeSchema // by data directory, keyspace (and table); nil: none there
	// tableRead: a keyspace one of whose tables was read alone
	tableRead map[string]bool

	sayMu sync.Mutex
	said  map[string]bool // stderr lines already printed
}

// readAll reads every keyspace of the data directory dir (--schema-from).
func (ns *nodeSchemas) readAll(dir string) (*inspect.NodeSchema, error) {
	s, err := nodeschema.Read(dir, nodeschema.Options{SSTable: ns.o})
	if err != nil {
		return nil, err
	}
	return ns.use(dir, s), nil
}

// find is the schema of the node whose data directory holds the table
// directory td (<data>/<keyspace>/<table>-<id>/ with <data>/system_schema),
// read for td's keyspace; nil when there is none.
func (ns *nodeSchemas) find(td format.TableDir) *inspect.NodeSchema {
	if !td.HasID() || td.Keyspace == "" {
		return nil
	}
	data := filepath.Dir(filepath.Dir(td.BaseDir())) // a secondary index's .<index>/ lies in its table's
	ksKey := data + "\x00" + td.Keyspace
	tableKey := ksKey + "\x00" + td.BaseTable()
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if n, ok := ns.read[ksKey]; ok {
		return n
	}
	if n, ok := ns.read[tableKey]; ok {
		return n
	}
	if fi, err := os.Stat(filepath.Join(data, "system_schema")); err != nil || !fi.IsDir() {
		ns.read[ksKey] = nil
		return nil
	}
	// The first table of a keyspace is read alone (a command on one table
	// reads a few rows of a node of thousands); from the second on, the
	// keyspace whole, once.
	o := nodeschema.Options{Keyspaces: []string{td.Keyspace}, SSTable: ns.o}
	key := ksKey
	if !ns.tableRead[ksKey] {
		o.Table, key = td.BaseTable(), tableKey
		if ns.tableRead == nil {
			ns.tableRead = map[string]bool{}
		}
		ns.tableRead[ksKey] = true
	}
	ns.read[key] = nil
	s, err := nodeschema.Read(data, o)
	if err != nil {
		ns.say(fmt.Sprintf("sstabletool: %s: %v; names from the sstables' headers", data, err))
		return nil
	}
	n := ns.use(data, s)
	ns.read[key] = n
	return n
}

// use says which schema is used and what of it could not be read.
func (ns *nodeSchemas) use(dir string, s *nodeschema.Schema) *inspect.NodeSchema {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	n := &inspect.NodeSchema{Origin: "system_schema of " + dir, Schema: s.CQL}
	ns.say("schema: " + n.Origin)
	for _, w := range s.Warnings {
		ns.say(fmt.Sprintf("sstabletool: warning: %s: %v", n.Origin, w))
	}
	return n
}

// warn prints a schema warning about an sstable, once.
func (ns *nodeSchemas) warn(msg string) { ns.say("sstabletool: warning: " + msg) }

func (ns *nodeSchemas) say(line string) {
	ns.sayMu.Lock()
	defer ns.sayMu.Unlock()
	if ns.said == nil {
		ns.said = map[string]bool{}
	}
	if ns.said[line] {
		return
	}
	ns.said[line] = true
	fmt.Fprintln(stderr, line)
}

// schemaNames are the names the command's schema gives an sstable's key
// and clustering columns; ok is false when no schema names them (the
// header's placeholders would be all there is).
func schemaNames(sf *inspect.SchemaSource, s *sstable.SSTable) (inspect.Names, bool) {
	if sf == nil || !sf.Resolves(s) {
		return inspect.Names{}, false
	}
	n, err := sf.Apply(s)
	return n, err == nil
}

// nodeTableID is the id the node whose data directory is data gives
// keyspace.table in its system_schema (32 hex digits, as a table
// directory's name ends), and the source's name; ok is false when the
// directory has no readable system_schema or it has no such table.
// KEYSPACE TABLE with --data takes the table's directory by it when the
// name has several (a table dropped and created again).
func nodeTableID(data, keyspace, table string) (id, origin string, ok bool) {
	if fi, err := os.Stat(filepath.Join(data, "system_schema")); err != nil || !fi.IsDir() {
		return "", "", false
	}
	s, err := nodeschema.Read(data, nodeschema.Options{Keyspaces: []string{keyspace}})
	if err != nil {
		return "", "", false
	}
	for _, t := range s.CQL.Lookup(keyspace, table) {
		if t.ID != "" && t.ViewOf == "" {
			if abs, err := filepath.Abs(data); err == nil {
				data = abs
			}
			return strings.ReplaceAll(t.ID, "-", ""), "system_schema of " + data, true
		}
	}
	return "", "", false
}
