// Command grpcput is the smallest gRPC client of etcd's KV.Put that
// grpc-go allows, for bench/peerbench: plain grpc.ClientConn.Invoke with
// grpc-go's default codec, without etcd's client, its interceptors or its
// balancer. It puts --total keys over --conns connections from --clients
// goroutines as fast as etcd answers, and prints its throughput as JSON.
//
//	go run ./bench/peerbench/grpcput --endpoint 127.0.0.1:2379 --total 200000
package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

func main() {
	ep := flag.String("endpoint", "127.0.0.1:2379", "etcd's client address, host:port (plain HTTP/2)")
	conns := flag.Int("conns", 100, "connections")
	clients := flag.Int("clients", 100, "goroutines sending, spread over the connections")
	total := flag.Int64("total", 200000, "puts to make")
	keySize := flag.Int("key-size", 8, "bytes of each key (a sequence number)")
	valSize := flag.Int("val-size", 256, "bytes of each value")
	flag.Parse()
	if *conns < 1 || *clients < 1 || *total < 1 || *keySize < 8 {
		fmt.Fprintln(os.Stderr, "grpcput: --conns, --clients and --total must be at least 1, --key-size at least 8")
		os.Exit(2)
	}
	cs := make([]*grpc.ClientConn, *conns)
	for i := range cs {
		c, err := grpc.NewClient(*ep, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			fmt.Fprintln(os.Stderr, "grpcput:", err)
			os.Exit(2)
		}
		defer c.Close()
		cs[i] = c
	}
	val := make([]byte, *valSize)
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := range *clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := cs[w%len(cs)]
			req := &pb.PutRequest{Key: make([]byte, *keySize), Value: val}
			resp := new(pb.PutResponse)
			for {
				i := next.Add(1) - 1
				if i >= *total {
					return
				}
				binary.BigEndian.PutUint64(req.Key[len(req.Key)-8:], uint64(i))
				if err := c.Invoke(context.Background(), "/etcdserverpb.KV/Put", req, resp); err != nil {
					failed.Add(1)
				}
				resp.Reset()
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	ok := *total - failed.Load()
	_ = json.NewEncoder(os.Stdout).Encode(map[string]any{"throughput": float64(ok) / el.Seconds(), "errors": failed.Load(), "seconds": el.Seconds()})
}
