package diskprobe

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
)

// Error is a failure of the probe on a path. Its message names the path,
// the cause in words, and what to do about it.
type Error struct {
	Op   string // what was being done, e.g. "create probe file"
	Path string
	Err  error
	// DirFlag and SizeFlag name the options of the directory and the size
	// in the hint (Options.DirFlag, Options.SizeFlag); --dir and --size
	// when empty.
	DirFlag, SizeFlag string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s %s: %s", e.Op, e.Path, explain(e.Err, e.DirFlag, e.SizeFlag))
}

func (e *Error) Unwrap() error { return e.Err }

// Explain turns a system error into words and a hint. An error that wraps
// the system error with more detail keeps that detail.
func Explain(err error) string { return explain(err, "", "") }

func explain(err error, dirFlag, sizeFlag string) string {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return err.Error()
	}
	if dirFlag == "" {
		dirFlag = "--dir"
	}
	if sizeFlag == "" {
		sizeFlag = "--size"
	}
	words, hint := describe(errno)
	hint = strings.NewReplacer("--dir", dirFlag, "--size", sizeFlag).Replace(hint)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		// The path is already in the message: keep the cause only.
		err = pe.Err
	}
	if detail := err.Error(); detail != errno.Error() {
		// e.g. "needs 23068672 bytes ... only 0 are free: no space left on device"
		words = strings.TrimSuffix(detail, ": "+errno.Error()) + ": " + words
	}
	if hint == "" {
		return words
	}
	return words + " (" + hint + ")"
}

func describe(errno syscall.Errno) (words, hint string) {
	switch errno {
	case syscall.ENOENT:
		return "no such file or directory", "create it first, or pass an existing --dir"
	case syscall.ENOTDIR:
		return "not a directory", "--dir must name a directory"
	case syscall.EACCES, syscall.EPERM:
		return "permission denied", "run as a user who may write there, or choose another --dir"
	case syscall.EROFS:
		return "read-only file system", "choose a writable --dir"
	case syscall.ENOSPC:
		return "no space left on device", "free some space or lower --size"
	case syscall.EDQUOT:
		return "disk quota exceeded", "free some space or lower --size"
	case syscall.EINVAL:
		return "invalid argument", "with --direct, use a --bs that is a multiple of the device's block size, e.g. 4096"
	case syscall.EIO:
		return "input/output error", "the device failed the request; check dmesg"
	}
	return errno.Error(), ""
}
