// Package mailbox carries steering messages pushed while a run is live; the run loop
// drains them as user entries at the next turn start.
package mailbox

import "sync"

// Message is one queued steering message.
type Message struct {
	ID   string `json:"id,omitempty"`
	Text string `json:"text"`
	// Source says who pushed it ("user", "subagent:<id>", ...).
	Source string `json:"source,omitempty"`
}

// Mailbox is a concurrency-safe FIFO. The zero value is ready to use.
type Mailbox struct {
	mu     sync.Mutex
	queue  []Message
	notify chan struct{}
}

// Push queues a message.
func (m *Mailbox) Push(msg Message) {
	m.mu.Lock()
	m.queue = append(m.queue, msg)
	ch := m.notify
	m.notify = nil
	m.mu.Unlock()
	if ch != nil {
		close(ch)
	}
}

// Drain removes and returns all queued messages in push order.
func (m *Mailbox) Drain() []Message {
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queue
	m.queue = nil
	return q
}

// Remove withdraws the queued message with the given id, reporting whether it was there.
func (m *Mailbox) Remove(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, msg := range m.queue {
		if msg.ID == id {
			m.queue = append(m.queue[:i], m.queue[i+1:]...)
			return true
		}
	}
	return false
}

// Len reports how many messages are queued.
func (m *Mailbox) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.queue)
}

// Wait returns a channel closed at the next Push (or already closed if non-empty).
func (m *Mailbox) Wait() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.queue) > 0 {
		ch := make(chan struct{})
		close(ch)
		return ch
	}
	if m.notify == nil {
		m.notify = make(chan struct{})
	}
	return m.notify
}
