// Package outfile writes output files so that a failed command never
// destroys or corrupts an existing file: everything is written to a
// temporary file in the destination's directory, which is renamed over the
// destination only once complete. Every mdk command that writes files goes
// through it.
package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// File is an output file being written. Write to it, then Commit; on any
// failure Abort (deferring Abort after Commit is fine: it then does
// nothing).
type File struct {
	f         *os.File
	path      string
	published bool // renamed into place: path is the file being written
	done      bool // committed or aborted
}

// Create starts writing the file path: a new temporary file beside it,
// with path's permissions if path exists (0644 otherwise).
func Create(path string) (*File, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, unwrapPath(err))
	}
	mode := fs.FileMode(0o644)
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		mode = st.Mode().Perm()
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("create %s: %w", path, unwrapPath(err))
	}
	return &File{f: f, path: path}, nil
}

// unwrapPath drops the temporary file's name from an error: messages name
// the destination instead.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Name is the destination path.
func (o *File) Name() string { return o.path }

// Write writes to the temporary file. Errors name the destination.
func (o *File) Write(p []byte) (int, error) {
	n, err := o.f.Write(p)
	if err != nil {
		err = fmt.Errorf("write %s: %w", o.path, unwrapPath(err))
	}
	return n, err
}

// Publish renames the file into place now, before it is complete, and
// keeps it open for writing. Recorders publish once the first window is
// complete, so that a recorder killed later still leaves every completed
// window readable; before that, a failure leaves the old file untouched.
func (o *File) Publish() error {
	if o.published {
		return nil
	}
	if err := o.f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", o.path, unwrapPath(err))
	}
	if err := os.Rename(o.f.Name(), o.path); err != nil {
		return fmt.Errorf("rename into %s: %w", o.path, unwrapPath(err))
	}
	o.published = true
	return nil
}

// Commit finishes the file: it syncs and closes it and renames it over the
// destination. After an error the destination is as it was (unless it was
// published) and the temporary file is gone.
func (o *File) Commit() error { return CommitAll(o) }

// CommitAll commits files as one output: it syncs and closes every file
// first, and renames them into place only if all of that succeeded, so a
// full disk leaves every destination as it was. After an error every
// temporary file is gone.
func CommitAll(files ...*File) error {
	var err error
	for _, o := range files {
		if o.done {
			return errors.New("outfile: commit after commit or abort")
		}
	}
	for _, o := range files {
		if e := o.f.Sync(); e != nil && err == nil {
			err = fmt.Errorf("write %s: %w", o.path, unwrapPath(e))
		}
		if e := o.f.Close(); e != nil && err == nil {
			err = fmt.Errorf("write %s: %w", o.path, unwrapPath(e))
		}
		o.done = true
	}
	for _, o := range files {
		if err == nil && !o.published {
			if e := os.Rename(o.f.Name(), o.path); e != nil {
				err = fmt.Errorf("rename into %s: %w", o.path, unwrapPath(e))
			} else {
				o.published = true
			}
		}
		if !o.published {
			os.Remove(o.f.Name())
		}
	}
	return err
}

// Abort closes the file and removes it, unless it was committed or
// published (a published file keeps what was written).
func (o *File) Abort() {
	if o.done {
		return
	}
	o.done = true
	o.f.Close()
	if !o.published {
		os.Remove(o.f.Name())
	}
}

// WriteFile writes data to path through a temporary file.
func WriteFile(path string, data []byte) error {
	o, err := Create(path)
	if err != nil {
		return err
	}
	defer o.Abort()
	if _, err := o.Write(data); err != nil {
		return err
	}
	return o.Commit()
}

// Check reports whether path could be written now, before a command does
// its work: it creates the temporary file Create would and removes it. An
// error names path (a missing or read-only directory, path a directory).
func Check(path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("create %s: is a directory", path)
	}
	f, err := Create(path)
	if err != nil {
		return err
	}
	f.Abort()
	return nil
}
