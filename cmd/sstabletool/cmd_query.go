package main

import (
	"bufio"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/cql"
	"github.com/sstabletool/sstabletool/internal/inspect"
	"github.com/sstabletool/sstabletool/internal/query"
	"github.com/sstabletool/sstabletool/merge"
)

// queryCommand is the query command.
func queryCommand() *cli.Command {
	return command(&cli.Command{
		Name:      "query",
		Usage:     "run a CQL SELECT on a table's sstables, merged as Cassandra reads them: the live rows, as cqlsh prints them",
		ArgsUsage: `"SELECT ... FROM ks.table [WHERE ...] [LIMIT n]" PATHS|DIR`,
		Description: "Merges the table's sstables as Cassandra's read path does (as of --now: TTLs that ran out are gone,\n" +
			"deletions shadow what they delete) and prints the rows the SELECT selects as cqlsh prints them (a\n" +
			"header, a -----+----- rule, values right-aligned, \"(N rows)\"), or with --json one JSON object per row\n" +
			"keyed by column name.\n\n" +
			"Supported: * or a column list; in WHERE, = or IN on every partition key column; token(k...) with\n" +
			">, >=, <, <= (and =); on clustering columns = on a prefix, then <, <=, >, >= on the next one (only\n" +
			"with the partition key restricted, as CQL requires); LIMIT. Anything else CQL allows (ALLOW\n" +
			"FILTERING, restrictions on other columns, ORDER BY, GROUP BY, aggregates and functions other than\n" +
			"token(), SELECT JSON, DISTINCT, aliases, IN on clustering columns, ...) is refused with its name.\n\n" +
			"A partition key restriction is looked up through each sstable's Filter.db and index, a clustering\n" +
			"slice seeks through the promoted index (or Rows.db), a token range starts where the index says:\n" +
			"a point query on a large table reads only the blocks that hold its rows.\n\n" +
			"Column names: the table's regular and static columns are in the sstables' headers; the partition\n" +
			"key and clustering columns are named by the node's own schema (the system_schema of the data\n" +
			"directory the sstables lie in, <data>/<keyspace>/<table>-<id>/; or --schema-from DIR), or --schema\n" +
			"(cqlsh DESCRIBE output), else key (key1, key2...) and clustering1, clustering2... as the schema\n" +
			"command prints them. Columns the schema says were dropped are not listed, and their cells written\n" +
			"before the drop are not read. FROM must name the table the sstables' directory or the schema names.\n" +
			"With -r over a data directory, the table FROM names is queried.\n\n" +
			"Examples:\n" +
			"  sstabletool query \"SELECT * FROM shop.orders WHERE pk = '0'\" /var/lib/cassandra/data/shop/orders-4a4e3f70c67c11eeb4a4d93dc8a1f6a2/\n" +
			"  sstabletool query --schema shop.cql \"SELECT pk, ck, val FROM shop.orders WHERE pk IN ('0', '1') AND ck >= '3'\" .\n" +
			"  sstabletool query \"SELECT * FROM shop.orders WHERE token(pk) > 0x30 LIMIT 10\" --now 2024-05-01T00:00:00Z .   # Murmur3 tokens are numbers: token(pk) > 0\n" +
			"  sstabletool query --schema-from /var/lib/cassandra/data \"SELECT * FROM shop.orders LIMIT 3\" /tmp/copy-of-orders --table shop.orders\n" +
			"  sstabletool query -r \"SELECT * FROM shop.orders WHERE pk = '0'\" /var/lib/cassandra/data --json | jq '.[].val'",
		Flags:        []cli.Flag{nowFlag, jsonFlag, accessFlag, schemaFlag, tableFlag, recursiveFlag},
		Action:       queryAction,
		BashComplete: pathsAfter(1), // the statement, then paths
	}, argSpec{min: 2, max: -1, what: "SELECT statement, then sstable files or a data directory"})
}

func queryAction(c *cli.Context) error {
	args := c.Args().Slice()
	sel, err := cql.Parse(args[0])
	if err != nil {
		return usageError("query: %q: %v", args[0], err)
	}
	sf, err := loadSchema(c)
	if err != nil {
		return err
	}
	sc, err := findSSTablesIn(c, args[1:])
	if err != nil {
		return err
	}
	groups := groupTables(sc, c.Bool("recursive"))
	if c.Bool("recursive") {
		if groups, err = groupsNamed(groups, sel); err != nil {
			return err
		}
	}
	return mergeGroups(c, groups, "queried", func(g tableGroup) error {
		t, err := openTable(c, g, sf)
		if err != nil {
			return err
		}
		defer closeTable(t)
		return queryTable(c, t, sf, sel)
	})
}

// groupsNamed keeps, of the tables a recursive scan found, the one FROM
// names (by its directory, <keyspace>/<table>-<id>/).
func groupsNamed(groups []tableGroup, sel *cql.Select) ([]tableGroup, error) {
	var keep []tableGroup
	var seen []string
	for _, g := range groups {
		d := format.TableOf(g.dir)
		ks := d.Keyspace
		if ks == "" {
			ks = filepath.Base(filepath.Dir(g.dir))
		}
		seen = append(seen, ks+"."+d.Table)
		if d.Table == sel.Table && (sel.Keyspace == "" || sel.Keyspace == ks) {
			keep = append(keep, g)
		}
	}
	if len(keep) == 0 {
		return nil, usageError("query: no table %s among the %d found: %s", fromName(sel), len(groups), strings.Join(seen, ", "))
	}
	return keep, nil
}

func fromName(sel *cql.Select) string {
	if sel.Keyspace == "" {
		return sel.Table
	}
	return sel.Keyspace + "." + sel.Table
}

// tableNames names the table and its key columns: --schema, else the
// directory and placeholders. known is false when nothing names the table
// (files outside a <keyspace>/<table>-<id>/ directory, no --schema).
func tableNames(t *merge.Table, sf *inspect.SchemaSource) (n query.Names, known bool, err error) {
	first := t.SSTables()[0]
	var in inspect.Names
	if sf != nil {
		if in, err = sf.Apply(first); err != nil {
			return n, false, err
		}
		known = sf.Resolves(first) || t.Dir().HasID()
	} else {
		in = inspect.DefaultNames(first)
		known = t.Dir().HasID()
	}
	return query.Names{Keyspace: in.Keyspace, Table: in.Table, PartitionKey: in.PartitionKey, Clustering: in.Clustering, Dropped: in.Dropped}, known, nil
}

func queryTable(c *cli.Context, t *merge.Table, sf *inspect.SchemaSource, sel *cql.Select) error {
	o, err := mergeOptions(c, t, sf)
	if err != nil {
		return err
	}
	names, known, err := tableNames(t, sf)
	if err != nil {
		return err
	}
	if !known {
		names.Table = sel.Table
		if sel.Keyspace != "" {
			names.Keyspace = sel.Keyspace
		}
	}
	plan, err := query.NewPlan(sel, t, names)
	if err != nil {
		return stop(usageError("%v", err))
	}
	w := bufio.NewWriterSize(stdout, 64<<10)
	defer w.Flush()
	if c.Bool("json") {
		n := 0
		buf := []byte("[")
		err := plan.Run(o, func(r query.Row) error {
			if n > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, "\n  "...)
			buf = query.AppendJSON(buf, r)
			n++
			if len(buf) > 32<<10 {
				if _, err := w.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
			return nil
		})
		if err != nil {
			w.Write(buf)
			return err
		}
		if n > 0 {
			buf = append(buf, '\n')
		}
		buf = append(buf, "]\n"...)
		_, err = w.Write(buf)
		return err
	}
	tbl := query.NewTable(w, plan.Columns)
	if err := plan.Run(o, tbl.Add); err != nil {
		return err
	}
	return tbl.End()
}
