package cli

import (
	"strconv"

	"github.com/etcdperf/etcdperf/internal/units"
)

// sizeValue is a flag holding a byte size written as 2300, 4k, 22m or 1GiB.
type sizeValue struct{ v *int64 }

func (s sizeValue) String() string {
	if s.v == nil {
		return "0"
	}
	return strconv.FormatInt(*s.v, 10)
}

func (s sizeValue) Set(str string) error {
	n, err := units.ParseSize(str)
	if err != nil {
		return err
	}
	if n < 0 {
		return strconv.ErrRange
	}
	*s.v = n
	return nil
}

func (sizeValue) Type() string { return "size" }
