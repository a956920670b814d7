// Package archtest holds the test of the package layering that
// docs/architecture.md draws: it reads every package's imports from the
// source and fails when one breaks the rules. It has no code of its own.
package archtest
