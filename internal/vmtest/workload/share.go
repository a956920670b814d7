//go:build linux

package workload

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Share is the sharing workload: a parent and Children child processes map
// the same Shared pages (a memfd, MAP_SHARED) and each touches them and
// Private pages of its own. Every child runs its own copy of the program
// file, so the processes share no page of program text either: counted by
// page frame, the Children+1 processes hold Shared + (Children+1)*(Private+
// their own runtime) pages; counted by virtual page, Children*Shared more.
type Share struct {
	Children, Shared, Private int
	Dir                       string // where the children's program copies go
}

// RunShare runs the parent: it starts the children, waits until all have
// touched their pages and prints "ready PID:SHARED:PRIVATE..." to out (its
// own first; SHARED and PRIVATE are the hex start addresses of the shared
// and the private mapping);
// then, every Period, all processes touch all their pages again, until in
// reaches end of file or a line "exit".
func RunShare(s Share, period time.Duration, in io.Reader, out io.Writer) error {
	fd, err := unix.MemfdCreate("mdk-shared", 0)
	if err != nil {
		return fmt.Errorf("memfd_create: %w", err)
	}
	memfd := os.NewFile(uintptr(fd), "mdk-shared")
	if err := memfd.Truncate(int64(s.Shared) * 4096); err != nil {
		return err
	}
	self, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		return err
	}
	var procs []string
	var kids []*exec.Cmd
	var stdins []io.WriteCloser // kept open: a child ends when its stdin closes
	defer func() {
		for _, w := range stdins {
			w.Close()
		}
		for _, c := range kids {
			c.Process.Kill()
			c.Wait()
		}
	}()
	for i := range s.Children {
		bin := fmt.Sprintf("%s/mdk-workload-child-%d", s.Dir, i)
		if err := os.WriteFile(bin, self, 0o755); err != nil {
			return err
		}
		c := exec.Command(bin, "share-child", strconv.Itoa(s.Shared), strconv.Itoa(s.Private), period.String())
		c.ExtraFiles = []*os.File{memfd}
		c.Stderr = os.Stderr
		stdout, err := c.StdoutPipe()
		if err != nil {
			return err
		}
		w, err := c.StdinPipe()
		if err != nil {
			return err
		}
		stdins = append(stdins, w)
		if err := c.Start(); err != nil {
			return err
		}
		kids = append(kids, c)
		line, err := bufio.NewReader(stdout).ReadString('\n')
		f := strings.Fields(line)
		if err != nil || len(f) != 2 || f[0] != "ready" {
			return fmt.Errorf("child %d: %q, %v", i, line, err)
		}
		procs = append(procs, fmt.Sprintf("%d:%s", c.Process.Pid, f[1]))
	}
	stop := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(in)
		for sc.Scan() && sc.Text() != "exit" {
		}
		close(stop)
	}()
	return touchLoop(memfd, s.Shared, s.Private, period, stop, func(addrs string) {
		fmt.Fprintf(out, "ready %d:%s", os.Getpid(), addrs)
		for _, p := range procs {
			fmt.Fprintf(out, " %s", p)
		}
		fmt.Fprintln(out)
	})
}

// RunShareChild is a child of RunShare: the memfd is file descriptor 3.
func RunShareChild(shared, private int, period time.Duration) error {
	stop := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(stop)
	}()
	return touchLoop(os.NewFile(3, "mdk-shared"), shared, private, period, stop, func(addrs string) { fmt.Println("ready", addrs) })
}

// touchLoop maps the shared pages and private pages, touches them all,
// calls ready, and touches them again every period until stop.
func touchLoop(memfd *os.File, shared, private int, period time.Duration, stop chan struct{}, ready func(addrs string)) error {
	sh, err := syscall.Mmap(int(memfd.Fd()), 0, shared*4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("mmap shared: %w", err)
	}
	pr, err := syscall.Mmap(-1, 0, private*4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS)
	if err != nil {
		return fmt.Errorf("mmap private: %w", err)
	}
	syscall.Madvise(pr, syscall.MADV_NOHUGEPAGE)
	touch := func() {
		for i := 0; i < shared; i++ {
			sh[i*4096]++
		}
		for i := 0; i < private; i++ {
			pr[i*4096]++
		}
	}
	touch()
	ready(fmt.Sprintf("%x:%x", uintptr(unsafe.Pointer(&sh[0])), uintptr(unsafe.Pointer(&pr[0]))))
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return nil
		case <-t.C:
			touch()
		}
	}
}
