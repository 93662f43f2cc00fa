// Package lru is a bounded map that forgets its least recently used
// entries, and entries older than a time to live. It is safe for
// concurrent use: one mutex guards it, held for a map operation and a few
// pointer moves.
package lru

import (
	"sync"
	"time"
)

// Cache maps keys to values. At most Limit entries are kept: adding one
// more evicts the least recently used. An entry is found for TTL after it
// was last Put; Get does not extend that. The zero value is not usable;
// call New.
type Cache[K comparable, V any] struct {
	mu    sync.Mutex
	items map[K]*node[K, V]
	ring  node[K, V] // sentinel: ring.next is the most recently used
	limit int
	ttl   time.Duration
	now   func() time.Time
}

type node[K comparable, V any] struct {
	prev, next *node[K, V]
	key        K
	val        V
	expires    time.Time
}

// New returns a Cache of at most limit entries (at least 1) that keeps
// each for ttl (positive). now is the clock; nil means time.Now.
func New[K comparable, V any](limit int, ttl time.Duration, now func() time.Time) *Cache[K, V] {
	if now == nil {
		now = time.Now
	}
	c := &Cache[K, V]{items: make(map[K]*node[K, V]), now: now}
	c.ring.next, c.ring.prev = &c.ring, &c.ring
	c.limit, c.ttl = max(limit, 1), ttl
	return c
}

// Get returns the value of key and true, or false when key is absent or
// its time to live has passed (the entry is then dropped). A found entry
// becomes the most recently used.
func (c *Cache[K, V]) Get(key K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.items[key]
	if !ok {
		var zero V
		return zero, false
	}
	if !c.now().Before(n.expires) {
		c.drop(n)
		var zero V
		return zero, false
	}
	c.unlink(n)
	c.pushFront(n)
	return n.val, true
}

// Put sets the value of key, which becomes the most recently used, for a
// new time to live. It reports whether another entry was evicted to make
// room.
func (c *Cache[K, V]) Put(key K, val V) (evicted bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	expires := c.now().Add(c.ttl)
	if n, ok := c.items[key]; ok {
		n.val, n.expires = val, expires
		c.unlink(n)
		c.pushFront(n)
		return false
	}
	var n *node[K, V]
	if len(c.items) >= c.limit {
		// Reuse the least recently used node for the new entry.
		n = c.ring.prev
		c.drop(n)
		evicted = true
	} else {
		n = new(node[K, V])
	}
	n.key, n.val, n.expires = key, val, expires
	c.items[key] = n
	c.pushFront(n)
	return evicted
}

// SetLimits changes the entry limit (at least 1) and the time to live of
// entries Put from now on; entries over the new limit are evicted, least
// recently used first, and their number returned.
func (c *Cache[K, V]) SetLimits(limit int, ttl time.Duration) (evicted int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.limit, c.ttl = max(limit, 1), ttl
	for len(c.items) > c.limit {
		c.drop(c.ring.prev)
		evicted++
	}
	return evicted
}

// Len returns the number of entries, counting expired ones not yet
// dropped.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}

// drop removes n from the map and the ring and clears its fields, so the
// value's memory is not kept by a reused node.
func (c *Cache[K, V]) drop(n *node[K, V]) {
	delete(c.items, n.key)
	c.unlink(n)
	*n = node[K, V]{}
}

func (c *Cache[K, V]) unlink(n *node[K, V]) {
	n.prev.next, n.next.prev = n.next, n.prev
	n.prev, n.next = nil, nil
}

func (c *Cache[K, V]) pushFront(n *node[K, V]) {
	n.prev, n.next = &c.ring, c.ring.next
	c.ring.next.prev = n
	c.ring.next = n
}
