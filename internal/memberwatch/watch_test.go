package memberwatch

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"
)

// A watch hands its first scrape and then a mark per interval to each
// until each says stop. A round that outlasts the interval makes the
// next rounds run at once, one after the other, or, with SkipLate, skips
// the rounds whose time passed.
func TestWatchRounds(t *testing.T) {
	tg := startEtcd(t)
	members := tg.Members()
	for _, skip := range []bool{false, true} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		var ns []int
		Watch(ctx, http.DefaultClient, members, WatchOptions{Interval: 100 * time.Millisecond, SkipLate: skip}, func(tk Tick) bool {
			ns = append(ns, tk.N)
			if tk.Mark.After[0].Err != nil || (tk.N > 0) != (tk.Mark.Before != nil) || tk.Window == nil {
				t.Errorf("round %d: %+v", tk.N, tk.Mark)
			}
			if len(ns) == 2 {
				// The two rounds after this one fall due meanwhile.
				time.Sleep(250 * time.Millisecond)
			}
			return len(ns) < 5
		})
		cancel()
		switch {
		case !skip && fmt.Sprint(ns) != "[0 1 2 3 4]":
			t.Errorf("rounds %v, want [0 1 2 3 4]", ns)
		case skip && (len(ns) != 5 || ns[0] != 0 || ns[2]-ns[1] < 3 || !slices.IsSorted(ns)):
			t.Errorf("skipping late rounds: rounds %v, want the two after the second skipped", ns)
		}
	}

	// The end of ctx ends the watch, and an interrupted round is not handed on.
	ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
	defer cancel()
	n := 0
	Watch(ctx, http.DefaultClient, members, WatchOptions{Interval: 100 * time.Millisecond}, func(Tick) bool { n++; return true })
	if n < 1 || n > 3 {
		t.Errorf("%d rounds in 250ms of 100ms intervals; want at most 3", n)
	}
}
