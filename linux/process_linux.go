package linux

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// iovec is struct iovec with the base as an address in another process,
// never dereferenced here (unix.Iovec holds a *byte).
type iovec struct{ base, len uintptr }

// Process is a pidfd of one process, through which its pages are advised
// with process_madvise(MADV_PAGEOUT): the pages of a process that exited
// and whose pid was reused are never touched. It never signals, pauses or
// writes to the process.
type Process struct {
	pid      int
	pidfd    int
	pageSize uint64
	iov      []iovec
	runs     []Run
}

// probe decides whether the running kernel has f, on this process.
func probe(f Feature) error {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if errors.Is(err, unix.ENOSYS) {
		return fmt.Errorf("%w: pidfd_open needs Linux 5.3", ErrNotSupported)
	}
	if err != nil {
		return nil // another failure (fd limit): not a missing feature
	}
	defer unix.Close(fd)
	if f == FeaturePidfd {
		return nil
	}
	_, _, errno := unix.Syscall6(unix.SYS_PROCESS_MADVISE, uintptr(fd), 0, 0, unix.MADV_PAGEOUT, 0, 0)
	switch errno {
	case unix.ENOSYS:
		return fmt.Errorf("%w: process_madvise needs Linux 5.10", ErrNotSupported)
	case unix.EINVAL:
		return fmt.Errorf("%w: process_madvise(MADV_PAGEOUT) needs Linux 5.10 with MADV_PAGEOUT (5.4)", ErrNotSupported)
	}
	return nil
}

// OpenProcess opens a pidfd of process pid and checks that its pages may
// be advised. It needs CAP_SYS_NICE and ptrace read access to the target
// (root has both) and Linux 5.10 (process_madvise).
func OpenProcess(pid int) (*Process, error) {
	if err := Probe(FeatureProcessMadvise); err != nil {
		return nil, err
	}
	return openProcess(pid, true)
}

// OpenPidfd opens a pidfd of process pid without checking that its pages
// may be advised: for a caller that only watches (a dry run), which needs
// no CAP_SYS_NICE. Its PageOut fails with ErrPermission where OpenProcess
// would have refused.
func OpenPidfd(pid int) (*Process, error) {
	if err := Probe(FeaturePidfd); err != nil {
		return nil, err
	}
	return openProcess(pid, false)
}

func openProcess(pid int, check bool) (*Process, error) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		if errors.Is(err, unix.ESRCH) {
			return nil, fmt.Errorf("%w: pid %d", ErrNoProcess, pid)
		}
		return nil, fmt.Errorf("pidfd_open %d: %w", pid, err)
	}
	if !check {
		return &Process{pid: pid, pidfd: fd, pageSize: uint64(PageSize())}, nil
	}
	// Probe with no iovecs: the kernel checks the pid and the permission.
	_, _, errno := unix.Syscall6(unix.SYS_PROCESS_MADVISE, uintptr(fd), 0, 0, unix.MADV_PAGEOUT, 0, 0)
	switch errno {
	case 0:
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
	return &Process{pid: pid, pidfd: fd, pageSize: uint64(PageSize())}, nil
}

// PID returns the process's pid.
func (p *Process) PID() int { return p.pid }

// Close closes the pidfd.
func (p *Process) Close() error { return unix.Close(p.pidfd) }

// PageOut asks the kernel to reclaim the virtual pages vpns (sorted in
// place) with MADV_PAGEOUT. Consecutive pages are merged into one iovec;
// each call passes at most IOVMax iovecs. The kernel stops a call at the
// first range it rejects (an mlocked or VM_PFNMAP mapping: EINVAL; an
// unmapped hole: ENOMEM) and reports the bytes advised before it; PageOut
// then retries that run page by page, skips the pages rejected, and goes
// on, so that one bad page costs only itself. Pages it skips stay present,
// for the caller's confirmation to count as refused. It returns
// ErrNoProcess once the process has exited.
func (p *Process) PageOut(vpns []uint64) (PageOutStats, error) {
	var st PageOutStats
	p.runs = Runs(p.runs, vpns)
	st.Runs = len(p.runs)
	runs := p.runs
	var split []Run // pages of a rejected run, tried one by one first
	for len(runs) > 0 || len(split) > 0 {
		batch := runs
		if len(split) > 0 {
			batch = split
		}
		n := min(len(batch), IOVMax)
		p.iov = p.iov[:0]
		for _, r := range batch[:n] {
			p.iov = append(p.iov, iovec{base: uintptr(r.First * p.pageSize), len: uintptr(r.N * p.pageSize)})
		}
		got, _, errno := unix.Syscall6(unix.SYS_PROCESS_MADVISE, uintptr(p.pidfd),
			uintptr(unsafe.Pointer(&p.iov[0])), uintptr(n), unix.MADV_PAGEOUT, 0, 0)
		st.Syscalls++
		switch errno {
		case 0, unix.EINVAL, unix.ENOMEM:
		case unix.ESRCH:
			return st, fmt.Errorf("%w: pid %d exited", ErrNoProcess, p.pid)
		case unix.EPERM:
			return st, fmt.Errorf("%w: process_madvise(MADV_PAGEOUT) on pid %d needs CAP_SYS_NICE and ptrace access", ErrPermission, p.pid)
		default:
			return st, fmt.Errorf("process_madvise(MADV_PAGEOUT) on pid %d: %w", p.pid, errno)
		}
		if errno != 0 {
			got = 0
		}
		st.Bytes += int64(got)
		// k: the runs advised in full.
		k, done := 0, uint64(0)
		for k < n && done+batch[k].N*p.pageSize <= uint64(got) {
			done += batch[k].N * p.pageSize
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
