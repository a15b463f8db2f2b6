package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// NewRunID returns a run ID that sorts by time and is unique: it names the
// default key prefix and the embedded etcd's folder.
func NewRunID() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}
