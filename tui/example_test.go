package tui_test

import (
	"fmt"
	"path/filepath"

	"github.com/sstabletool/sstabletool/tui"
)

// Run takes over the terminal until the user quits, then returns the
// sstables it could not open, for the caller to report; when none of them
// opens it returns at once with an error, the screen untouched.
func ExampleRun() {
	missing := filepath.Join("no", "such", "dir", "oa-1-big-Data.db")
	bad, err := tui.Run([]string{missing}, tui.Options{})
	fmt.Println(err)
	for _, u := range bad {
		fmt.Println(u.Path == missing, u.Err != nil)
	}
	// Output:
	// no sstable could be opened
	// true true
}
