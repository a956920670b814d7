package linux

import (
	"os"
	"strings"
)

// OpenMem opens /proc/PID/mem read-only: a process's memory, read at its
// virtual addresses (ptrace read access needed). mdk never opens it for
// writing.
func (fsys FS) OpenMem(pid int) (*os.File, error) {
	return os.Open(fsys.PIDPath(pid, "mem"))
}

// Comm returns the command name of process pid (/proc/PID/comm), "" if it
// cannot be read.
func (fsys FS) Comm(pid int) string {
	b, err := os.ReadFile(fsys.PIDPath(pid, "comm"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
