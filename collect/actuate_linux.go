//go:build linux

package collect

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// iovec is struct iovec with the base as an address in another process,
// never dereferenced here (unix.Iovec holds a *byte).
type iovec struct{ base, len uintptr }

// Actuator reclaims pages of one process: process_madvise(MADV_PAGEOUT)
// through a pidfd, so that the pages of a process that exited and whose pid
// was reused are never touched. It reads the process's pagemap to confirm
// what went out. It never signals, pauses or writes to the process.
type Actuator struct {
	pid      int
	pidfd    int
	pagemap  *Pagemap
	pageSize uint64
	iov      []iovec
	runs     []Run
}

// OpenActuator opens a pidfd and the pagemap of process pid. It needs
// CAP_SYS_NICE and ptrace read access to the target (root has both) and
// Linux 5.10 (process_madvise).
func (fsys FS) OpenActuator(pid int) (*Actuator, error) { return fsys.openActuator(pid, true) }

// OpenObserver is OpenActuator without the probe of process_madvise, for
// a dry run, which reads pagemap and never reclaims: it needs only the
// right to read the target's pagemap (its owner has it), not CAP_SYS_NICE.
// Its PageOut fails with ErrPermission where OpenActuator would have.
func (fsys FS) OpenObserver(pid int) (*Actuator, error) { return fsys.openActuator(pid, false) }

func (fsys FS) openActuator(pid int, probe bool) (*Actuator, error) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		if errors.Is(err, unix.ESRCH) {
			return nil, fmt.Errorf("%w: pid %d", ErrNoProcess, pid)
		}
		if errors.Is(err, unix.ENOSYS) {
			return nil, fmt.Errorf("%w: pidfd_open needs Linux 5.3", ErrNotSupported)
		}
		return nil, fmt.Errorf("pidfd_open %d: %w", pid, err)
	}
	// Probe with no iovecs: the kernel checks the pid, the permission and
	// that MADV_PAGEOUT may be applied to another process.
	var errno unix.Errno
	if probe {
		_, _, errno = unix.Syscall6(unix.SYS_PROCESS_MADVISE, uintptr(fd), 0, 0, unix.MADV_PAGEOUT, 0, 0)
	}
	switch errno {
	case 0:
	case unix.ENOSYS:
		unix.Close(fd)
		return nil, fmt.Errorf("%w: process_madvise needs Linux 5.10", ErrNotSupported)
	case unix.EINVAL:
		unix.Close(fd)
		return nil, fmt.Errorf("%w: process_madvise(MADV_PAGEOUT) of another process needs Linux 5.10 with MADV_PAGEOUT (5.4)", ErrNotSupported)
	case unix.EPERM:
		unix.Close(fd)
		return nil, fmt.Errorf("%w: process_madvise(MADV_PAGEOUT) on pid %d needs CAP_SYS_NICE and ptrace access", ErrPermission, pid)
	case unix.ESRCH:
		unix.Close(fd)
		return nil, fmt.Errorf("%w: pid %d", ErrNoProcess, pid)
	default:
		unix.Close(fd)
		return nil, fmt.Errorf("process_madvise on pid %d: %w", pid, errno)
	}
	pm, err := fsys.OpenPagemap(pid)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("open pagemap of %d: %w", pid, err)
	}
	return &Actuator{pid: pid, pidfd: fd, pagemap: pm, pageSize: uint64(unix.Getpagesize())}, nil
}

// Close closes the pidfd and the pagemap.
func (a *Actuator) Close() error {
	err := a.pagemap.Close()
	if cerr := unix.Close(a.pidfd); err == nil {
		err = cerr
	}
	return err
}

// Pagemap returns the target's open pagemap.
func (a *Actuator) Pagemap() *Pagemap { return a.pagemap }

// PageOut asks the kernel to reclaim the virtual pages vpns (sorted in
// place) with MADV_PAGEOUT. Consecutive pages are merged into one iovec;
// each call passes at most IOVMax iovecs. The kernel stops a call at the
// first range it rejects (an mlocked or VM_PFNMAP mapping: EINVAL; an
// unmapped hole: ENOMEM) and reports the bytes advised before it; PageOut
// then retries that run page by page, skips the pages rejected, and goes
// on, so that one bad page costs only itself. Pages it skips stay present
// and the caller's pagemap confirmation counts them as refused. It returns
// ErrNoProcess once the process has exited.
func (a *Actuator) PageOut(vpns []uint64) (PageOutStats, error) {
	var st PageOutStats
	a.runs = Runs(a.runs, vpns)
	st.Runs = len(a.runs)
	runs := a.runs
	var split []Run // pages of a rejected run, tried one by one first
	for len(runs) > 0 || len(split) > 0 {
		batch := runs
		if len(split) > 0 {
			batch = split
		}
		n := min(len(batch), IOVMax)
		a.iov = a.iov[:0]
		for _, r := range batch[:n] {
			a.iov = append(a.iov, iovec{base: uintptr(r.First * a.pageSize), len: uintptr(r.N * a.pageSize)})
		}
		got, _, errno := unix.Syscall6(unix.SYS_PROCESS_MADVISE, uintptr(a.pidfd),
			uintptr(unsafe.Pointer(&a.iov[0])), uintptr(n), unix.MADV_PAGEOUT, 0, 0)
		st.Syscalls++
		switch errno {
		case 0, unix.EINVAL, unix.ENOMEM:
		case unix.ESRCH:
			return st, fmt.Errorf("%w: pid %d exited", ErrNoProcess, a.pid)
		case unix.EPERM:
			return st, fmt.Errorf("%w: process_madvise(MADV_PAGEOUT) on pid %d needs CAP_SYS_NICE and ptrace access", ErrPermission, a.pid)
		default:
			return st, fmt.Errorf("process_madvise(MADV_PAGEOUT) on pid %d: %w", a.pid, errno)
		}
		if errno != 0 {
			got = 0
		}
		st.Bytes += int64(got)
		// k: the runs advised in full.
		k, done := 0, uint64(0)
		for k < n && done+batch[k].N*a.pageSize <= uint64(got) {
			done += batch[k].N * a.pageSize
			k++
		}
		inSplit := len(split) > 0
		rest := batch[n:]
		if k < n {
			// Run k was rejected or cut short: try its pages one by one,
			// or skip it if it is one page.
			bad := batch[k]
			rest = batch[k+1:]
			if bad.N > 1 && !inSplit {
				runs = rest
				for i := range bad.N {
					split = append(split, Run{First: bad.First + i, N: 1})
				}
				continue
			}
		}
		if inSplit {
			split = rest
		} else {
			runs = rest
		}
	}
	return st, nil
}
