"""The local sandbox: virtual paths onto a thread's host directories, file tools, optional bash.

It is a path guard, not an isolation boundary: `bash`, when enabled, runs on the host as the
service's user.
"""
