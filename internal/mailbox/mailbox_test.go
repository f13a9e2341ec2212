package mailbox

import (
	"sync"
	"testing"
	"time"
)

func TestFIFOAndRemove(t *testing.T) {
	var m Mailbox
	m.Push(Message{ID: "1", Text: "a"})
	m.Push(Message{ID: "2", Text: "b"})
	m.Push(Message{ID: "3", Text: "c"})
	if !m.Remove("2") || m.Remove("2") || m.Remove("zz") {
		t.Fatal("Remove reports wrongly")
	}
	if m.Len() != 2 {
		t.Fatalf("len %d", m.Len())
	}
	got := m.Drain()
	if len(got) != 2 || got[0].Text != "a" || got[1].Text != "c" {
		t.Fatalf("drain %+v", got)
	}
	if m.Len() != 0 || m.Drain() != nil {
		t.Fatal("drain did not empty the mailbox")
	}
}

func TestWait(t *testing.T) {
	var m Mailbox
	w := m.Wait()
	select {
	case <-w:
		t.Fatal("wait fired on an empty mailbox")
	default:
	}
	go m.Push(Message{Text: "x"})
	select {
	case <-w:
	case <-time.After(2 * time.Second):
		t.Fatal("wait never fired")
	}
	select {
	case <-m.Wait(): // non-empty: already closed
	default:
		t.Fatal("wait on a non-empty mailbox blocks")
	}
}

func TestConcurrentPushDrain(t *testing.T) {
	var m Mailbox
	var wg sync.WaitGroup
	const writers, each = 8, 200
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				m.Push(Message{Text: "x"})
			}
		}()
	}
	total := 0
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for {
		total += len(m.Drain())
		select {
		case <-done:
			total += len(m.Drain())
			if total != writers*each {
				t.Fatalf("drained %d of %d", total, writers*each)
			}
			return
		default:
		}
	}
}
