package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/internal/inspect"
)

// schemaCommand is the schema command.
func schemaCommand() *cli.Command {
	return command(&cli.Command{
		Name:      "schema",
		Usage:     "print the CREATE TABLE statement of an sstable's table: the node's own schema, or what the sstable implies",
		ArgsUsage: "PATH",
		Description: "When the sstable lies in a data directory (<data>/<keyspace>/<table>-<id>/) whose <data>/system_schema\n" +
			"holds its table (with the directory's table id), prints the table as cqlsh DESCRIBE TABLE prints it\n" +
			"(Cassandra 4.0+'s server-side DESCRIBE): the CREATE TYPE statements of the user types it uses, the\n" +
			"CREATE TABLE with the real column names, primary key, clustering order and the table's options\n" +
			"(compaction, compression, caching, gc_grace_seconds, ...), then its indexes. --schema-from DIR reads\n" +
			"another data directory's system_schema (see docs/schema.md).\n\n" +
			"Otherwise rebuilds CREATE TABLE from the serialization header in Statistics.db: key, clustering, static\n" +
			"and regular column types, and static/regular column names. Sstables do not store the names of\n" +
			"partition key and clustering columns, so they get placeholders (key, clustering1...) unless --schema\n" +
			"names them. Keyspace and table come from the data directory when it has that shape.\n\n" +
			"Examples:\n" +
			"  sstabletool schema /var/lib/cassandra/data/shop/orders-4a4e3f70c67c11eeb4a4d93dc8a1f6a2   # the node's own schema\n" +
			"  sstabletool schema --internals /var/lib/cassandra/data/shop/orders-4a4e3f70c67c11eeb4a4d93dc8a1f6a2   # with the id and dropped columns\n" +
			"  sstabletool schema --schema-from /var/lib/cassandra/data /tmp/copy-of-orders --table shop.orders   # a copy, named by a node\n" +
			"  sstabletool schema nc-1-big-Data.db                                            # key columns get placeholder names\n" +
			"  sstabletool schema nc-1-big-Data.db --schema shop.cql                          # names from cqlsh -e 'DESCRIBE KEYSPACE shop' > shop.cql\n" +
			"  sstabletool schema --schema shop.cql --table shop.orders /tmp/copy-of-orders   # a directory that does not name the table",
		Flags: []cli.Flag{accessFlag, schemaFlag, tableFlag, jsonFlag,
			&cli.BoolFlag{Name: "internals", Usage: "with a node's schema: also the table id and the dropped columns, as DESCRIBE ... WITH INTERNALS prints them"}},
		Action: schemaAction,
	}, oneSSTable)
}

func schemaAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return usageError("schema: give exactly one sstable (see --help)")
	}
	sf, err := loadSchema(c)
	if err != nil {
		return err
	}
	s, err := openSSTableNoSchema(c, c.Args().First())
	if err != nil {
		return err
	}
	defer s.Close()
	stmt, origin := sf.Describe(s, c.Bool("internals"))
	if stmt == "" {
		names, err := sf.Apply(s)
		if err != nil {
			return badData(err)
		}
		stmt = inspect.CreateTable(s, names)
	}
	if c.Bool("json") {
		out := map[string]string{"path": s.Path("Data.db"), "create_table": stmt}
		if origin != "" {
			out["schema"] = origin
		}
		return writeJSON(out)
	}
	_, err = fmt.Fprint(stdout, stmt)
	return err
}
