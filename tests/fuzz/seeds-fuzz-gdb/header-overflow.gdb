# profview-gdb 1
# interval-ns: 999999999999999999
Thread 1 (LWP 5 "a"):
#0  main () at a.c:1
Thread 1 (LWP 5 "a"):
#0  main () at a.c:1
Thread 1 (LWP 5 "a"):
#0  main () at a.c:1
Thread 1 (LWP 5 "a"):
#0  main () at a.c:1
Thread 1 (LWP 5 "a"):
#0  main () at a.c:1
Thread 1 (LWP 5 "a"):
#0  main () at a.c:1
Thread 1 (LWP 5 "a"):
#0  main () at a.c:1
Thread 1 (LWP 5 "a"):
#0  main () at a.c:1
Thread 1 (LWP 5 "a"):
#0  main () at a.c:1
Thread 1 (LWP 5 "a"):
#0  main () at a.c:1
Thread 1 (LWP 5 "a"):
#0  main () at a.c:1
Thread 1 (LWP 5 "a"):
#0  main () at a.c:1
