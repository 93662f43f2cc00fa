package lru

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
)

// clock is a settable time source.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// op is one step of a scripted cache session.
type op struct {
	do      string // "put", "get", "advance", "limit"
	key     string
	val     int
	d       time.Duration // advance: how far; limit: the new TTL
	limit   int
	wantOK  bool // get: found
	wantVal int  // get: its value
	wantN   int  // put: 1 if it evicted; limit: evicted count
}

func TestCache(t *testing.T) {
	tests := []struct {
		name  string
		limit int
		ops   []op
		keys  []string // the keys left, most recently used first
	}{
		{"least recently used is evicted", 2, []op{
			{do: "put", key: "a", val: 1},
			{do: "put", key: "b", val: 2},
			{do: "put", key: "c", val: 3, wantN: 1},
			{do: "get", key: "a"},
			{do: "get", key: "b", wantOK: true, wantVal: 2},
		}, []string{"b", "c"}},
		{"get makes an entry recent", 2, []op{
			{do: "put", key: "a", val: 1},
			{do: "put", key: "b", val: 2},
			{do: "get", key: "a", wantOK: true, wantVal: 1},
			{do: "put", key: "c", val: 3, wantN: 1},
			{do: "get", key: "b"},
		}, []string{"c", "a"}},
		{"put of a present key replaces, evicts nothing", 2, []op{
			{do: "put", key: "a", val: 1},
			{do: "put", key: "b", val: 2},
			{do: "put", key: "a", val: 10},
			{do: "get", key: "a", wantOK: true, wantVal: 10},
		}, []string{"a", "b"}},
		{"expired entry is gone", 4, []op{
			{do: "put", key: "a", val: 1},
			{do: "advance", d: time.Minute - time.Nanosecond},
			{do: "get", key: "a", wantOK: true, wantVal: 1},
			{do: "advance", d: time.Nanosecond},
			{do: "get", key: "a"},
		}, nil},
		{"get does not extend the time to live, put does", 4, []op{
			{do: "put", key: "a", val: 1},
			{do: "put", key: "b", val: 2},
			{do: "advance", d: 40 * time.Second},
			{do: "get", key: "a", wantOK: true, wantVal: 1},
			{do: "put", key: "b", val: 3},
			{do: "advance", d: 40 * time.Second},
			{do: "get", key: "a"},
			{do: "get", key: "b", wantOK: true, wantVal: 3},
		}, []string{"b"}},
		{"lower limit evicts the least recent", 3, []op{
			{do: "put", key: "a", val: 1},
			{do: "put", key: "b", val: 2},
			{do: "put", key: "c", val: 3},
			{do: "get", key: "a", wantOK: true, wantVal: 1},
			{do: "limit", limit: 1, d: time.Minute, wantN: 2},
		}, []string{"a"}},
		{"new time to live applies to later puts", 3, []op{
			{do: "put", key: "a", val: 1},
			{do: "limit", limit: 3, d: time.Hour},
			{do: "put", key: "b", val: 2},
			{do: "advance", d: 2 * time.Minute},
			{do: "get", key: "a"},
			{do: "get", key: "b", wantOK: true, wantVal: 2},
		}, []string{"b"}},
		{"limit below one is one", 0, []op{
			{do: "put", key: "a", val: 1},
			{do: "put", key: "b", val: 2, wantN: 1},
		}, []string{"b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := &clock{t: time.Unix(1e9, 0)}
			c := New[string, int](tt.limit, time.Minute, clk.now)
			for i, o := range tt.ops {
				switch o.do {
				case "put":
					if ev := c.Put(o.key, o.val); ev != (o.wantN == 1) {
						t.Errorf("op %d: Put(%q) evicted %v, want %v", i, o.key, ev, o.wantN == 1)
					}
				case "get":
					v, ok := c.Get(o.key)
					if ok != o.wantOK || v != o.wantVal {
						t.Errorf("op %d: Get(%q) = %d, %v; want %d, %v", i, o.key, v, ok, o.wantVal, o.wantOK)
					}
				case "advance":
					clk.t = clk.t.Add(o.d)
				case "limit":
					if n := c.SetLimits(o.limit, o.d); n != o.wantN {
						t.Errorf("op %d: SetLimits evicted %d, want %d", i, n, o.wantN)
					}
				}
			}
			if got := keys(c); !slices.Equal(got, tt.keys) {
				t.Errorf("keys %q, want %q", got, tt.keys)
			}
			if c.Len() != len(tt.keys) {
				t.Errorf("Len %d, want %d", c.Len(), len(tt.keys))
			}
		})
	}
}

// keys lists the cache's keys, most recently used first, checking that the
// ring and the map agree.
func keys[K comparable, V any](c *Cache[K, V]) []K {
	var out []K
	for n := c.ring.next; n != &c.ring; n = n.next {
		if c.items[n.key] != n || n.next.prev != n {
			panic(fmt.Sprintf("ring and map disagree at %v", n.key))
		}
		out = append(out, n.key)
	}
	if len(out) != len(c.items) {
		panic(fmt.Sprintf("%d nodes in the ring, %d in the map", len(out), len(c.items)))
	}
	return out
}

// TestAgainstModel runs random operations on a small cache and on a
// plain list model of it (most recent first, with expiry times).
func TestAgainstModel(t *testing.T) {
	type entry struct {
		key, val int
		expires  time.Time
	}
	rng := rand.New(rand.NewPCG(1, 2))
	clk := &clock{t: time.Unix(1e9, 0)}
	const ttl = 10 * time.Second
	limit := 5
	c := New[int, int](limit, ttl, clk.now)
	var model []entry
	find := func(k int) int {
		return slices.IndexFunc(model, func(e entry) bool { return e.key == k })
	}
	for i := range 20000 {
		k := rng.IntN(9)
		switch r := rng.IntN(20); {
		case r < 8:
			v := rng.Int()
			wantEvict := false
			if j := find(k); j >= 0 {
				model = slices.Delete(model, j, j+1)
			} else if len(model) >= limit {
				model, wantEvict = model[:len(model)-1], true
			}
			model = slices.Insert(model, 0, entry{k, v, clk.t.Add(ttl)})
			if ev := c.Put(k, v); ev != wantEvict {
				t.Fatalf("op %d: Put(%d) evicted %v, model %v", i, k, ev, wantEvict)
			}
		case r < 17:
			wantV, wantOK := 0, false
			if j := find(k); j >= 0 {
				e := model[j]
				model = slices.Delete(model, j, j+1)
				if clk.t.Before(e.expires) {
					wantV, wantOK = e.val, true
					model = slices.Insert(model, 0, e)
				}
			}
			if v, ok := c.Get(k); v != wantV || ok != wantOK {
				t.Fatalf("op %d: Get(%d) = %d, %v; model %d, %v", i, k, v, ok, wantV, wantOK)
			}
		case r < 19:
			clk.t = clk.t.Add(time.Duration(rng.IntN(4)) * time.Second)
		default:
			limit = 1 + rng.IntN(6)
			want := max(0, len(model)-limit)
			model = model[:len(model)-want]
			if n := c.SetLimits(limit, ttl); n != want {
				t.Fatalf("op %d: SetLimits(%d) evicted %d, model %d", i, limit, n, want)
			}
		}
		var want []int
		for _, e := range model {
			want = append(want, e.key)
		}
		if got := keys(c); !slices.Equal(got, want) {
			t.Fatalf("op %d: keys %v, model %v", i, got, want)
		}
	}
}

// TestConcurrent hammers one cache from several goroutines (run with
// -race); the bound holds throughout.
func TestConcurrent(t *testing.T) {
	const limit = 64
	c := New[int, int](limit, time.Minute, nil)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for range 5000 {
				k := rng.IntN(200)
				if rng.IntN(2) == 0 {
					c.Put(k, k)
				} else if v, ok := c.Get(k); ok && v != k {
					t.Errorf("Get(%d) = %d", k, v)
				}
			}
		})
	}
	wg.Wait()
	if n := c.Len(); n != limit {
		t.Errorf("Len %d after many puts, want %d", n, limit)
	}
	keys(c)
}

// BenchmarkGetPut is a hit (Get) then a refresh (Put) per operation, as a
// remembered response costs, on a full cache; run with -cpu 1,2 to see
// what the one mutex costs under contention.
func BenchmarkGetPut(b *testing.B) {
	type key struct {
		gen        uint64
		host, path string
	}
	const n = 10000
	c := New[key, []uint64](n, time.Minute, nil)
	ks := make([]key, n)
	for i := range ks {
		ks[i] = key{1, "www.example.com", fmt.Sprintf("/static/%d/app.css", i)}
		c.Put(ks[i], nil)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := rand.IntN(n)
		for pb.Next() {
			k := ks[i%n]
			if _, ok := c.Get(k); !ok {
				b.Error("miss")
			}
			c.Put(k, nil)
			i += 7
		}
	})
}
