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
		Usage:     "print the CREATE TABLE statement an sstable implies",
		ArgsUsage: "PATH",
		Description: "Rebuilt from the serialization header in Statistics.db: key, clustering, static and regular\n" +
			"column types, and static/regular column names. Sstables do not store the names of partition key\n" +
			"and clustering columns, so they get placeholders (key, clustering1...) unless --schema names them.\n" +
			"Keyspace and table come from the data directory (<keyspace>/<table>-<id>/) when it has that shape.\n\n" +
			"Examples:\n" +
			"  sstabletool schema nc-1-big-Data.db                                            # key columns get placeholder names\n" +
			"  sstabletool schema nc-1-big-Data.db --schema shop.cql                          # names from cqlsh -e 'DESCRIBE KEYSPACE shop' > shop.cql\n" +
			"  sstabletool schema --schema shop.cql --table shop.orders /tmp/copy-of-orders   # a directory that does not name the table",
		Flags:  []cli.Flag{accessFlag, schemaFlag, tableFlag, jsonFlag},
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
	names := inspect.DefaultNames(s)
	if sf != nil {
		if names, err = sf.Apply(s); err != nil {
			return badData(err)
		}
	}
	stmt := inspect.CreateTable(s, names)
	if c.Bool("json") {
		return writeJSON(map[string]string{"path": s.Path("Data.db"), "create_table": stmt})
	}
	_, err = fmt.Fprint(stdout, stmt)
	return err
}
