package scale

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/etcdperf/etcdperf/internal/etcdlog"
)

// LogTail counts the warnings etcd logs, by class, in the lines its log
// files gained since the last Count.
type LogTail struct {
	files   []string
	offsets []int64
	p       *etcdlog.Parser
	cl      etcdlog.Classifier
	buf     []byte
}

// maxTailRead bounds what one Count reads of a file; the rest waits for
// the next Count.
const maxTailRead = 64 << 20

// NewLogTail starts at the current end of every file: what was logged
// before (the members' start) is not counted.
func NewLogTail(files []string) *LogTail {
	t := &LogTail{files: files, offsets: make([]int64, len(files)), p: etcdlog.NewParser(etcdlog.ParserOptions{})}
	for i, f := range files {
		if st, err := os.Stat(f); err == nil {
			t.offsets[i] = st.Size()
		}
	}
	return t
}

// Count returns the events of the lines completed since the last call, by
// class id (etcdlog's ids, e.g. slow_apply).
func (t *LogTail) Count() (map[string]int64, error) {
	out := map[string]int64{}
	var e etcdlog.Entry
	var ev etcdlog.Event
	for i, name := range t.files {
		f, err := os.Open(name)
		if err != nil {
			return out, fmt.Errorf("read etcd's log %s: %w", name, err)
		}
		t.buf = t.buf[:0]
		buf := bytes.NewBuffer(t.buf)
		_, err = io.Copy(buf, io.NewSectionReader(f, t.offsets[i], maxTailRead))
		f.Close()
		if err != nil {
			return out, fmt.Errorf("read etcd's log %s: %w", name, err)
		}
		b := buf.Bytes()
		t.buf = b
		// Only whole lines: a line being written is read next time.
		last := bytes.LastIndexByte(b, '\n')
		if last < 0 {
			continue
		}
		t.offsets[i] += int64(last + 1)
		for _, line := range bytes.Split(b[:last], []byte{'\n'}) {
			if t.p.Parse(line, &e) && t.cl.Classify(&e, &ev) {
				out[ev.Class.ID()]++
				if ev.Also != etcdlog.ClassNone {
					out[ev.Also.ID()]++
				}
			}
		}
	}
	return out, nil
}
