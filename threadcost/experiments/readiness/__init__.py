"""Tokens in flight (issue #46): K tokens circulating among N tasks, waited for by
threads, an epoll loop or an io_uring loop."""
