#!/usr/bin/env bash
# The control signal never kills the program, however early it comes:
# sent to collect-timer, or to the program between its fork and its
# library's start, or to a process of the run between its exec and its
# library's start, it is held until the library takes it.  Without that
# hold some of these runs die of SIGUSR2 (status 140); with it none may.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
build pauser
cd "$WORK"

early_control_signal "$COLLECT_TIMER"
exit 0
