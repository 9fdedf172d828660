// Package lint holds tests that hold the code to the project's structure:
// lint_test.go checks every import against the layering docs/design.md
// draws. It has no code of its own.
package lint
