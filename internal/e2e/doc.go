// Package e2e holds the end-to-end tests of docs/e2e.md, and nothing else:
// real applications (memcached and sqlite3 from Debian) in the custom guest
// kernel, recorded with mdk record --pid, tuned with mdk tune, each setting
// deployed with mdk agent --pid on a fresh run, and the run compared with
// mdk agent compare --predicted-from the recording. Its tests are in
// e2e_linux_test.go; internal/vmtest/e2e.sh runs the full experiment.
package e2e
