"""Processes okstra starts or looks at, the ground floor of `launch` and `life`.

`process`: a process named by its pid and start time (so a reused pid is never taken
for it), its process group, signals; `tmux`: okstra's own tmux server and its panes
(the user's server only where asked). Nothing here knows a run.
"""

# Where the user names the tmux server okstra should use (a socket path); here, so a
# launch plan names it without loading the tmux module.
TMUX_SOCKET_VAR = "OKSTRA_TMUX_SOCKET"
