# profview-gdb 1
# pid: 23950
# program: /tmp/g/mt
# mode: eu-stack
# interval-ns: 100000000
# start: 1795340531.845545760
# dumper: eu-stack (elfutils) 0.188
# snapshot: 1 1795340531.845579150
Thread 1 (LWP 23950 "mt"):
#0  0x00007f0ecc55fdf2 in __libc_pause () at ../sysdeps/unix/sysv/linux/pause.c:29
#1  0x000055ceb2672299 in main () at /tmp/g/mt.c:11
#2  0x00007f0ecc4b324a in __libc_start_call_main () at ../sysdeps/nptl/libc_start_call_main.h:58
#3  0x00007f0ecc4b3305 in __libc_start_main_impl () at ../csu/libc-start.c:360
#4  0x000055ceb26720a1 in _start () from /tmp/g/mt

Thread 2 (LWP 23952 "worker-a"):
#0  0x000055ceb26721b4 in spin_a () at /tmp/g/mt.c:6
#1  0x000055ceb26721e7 in ta () at /tmp/g/mt.c:8
#2  0x00007f0ecc5151f5 in start_thread () at ./nptl/pthread_create.c:442
#3  0x00007f0ecc5958ec in __clone3 () at ../sysdeps/unix/sysv/linux/x86_64/clone3.S:81

Thread 3 (LWP 23953 "worker-b"):
#0  0x000055ceb26721fc in spin_b () at /tmp/g/mt.c:7
#1  0x000055ceb267223f in tb () at /tmp/g/mt.c:9
#2  0x00007f0ecc5151f5 in start_thread () at ./nptl/pthread_create.c:442
#3  0x00007f0ecc5958ec in __clone3 () at ../sysdeps/unix/sysv/linux/x86_64/clone3.S:81

Thread 4 (LWP 23954 "sleeper"):
#0  0x00007f0ecc55b545 in __GI___clock_nanosleep () at ../sysdeps/unix/sysv/linux/clock_nanosleep.c:48
#1  0x00007f0ecc55fe53 in __GI___nanosleep () at ../sysdeps/unix/sysv/linux/nanosleep.c:25
#2  0x00007f0ecc58b295 in usleep () at ../sysdeps/posix/usleep.c:31
#3  0x000055ceb267218d in tc () at /tmp/g/mt.c:10
#4  0x00007f0ecc5151f5 in start_thread () at ./nptl/pthread_create.c:442
#5  0x00007f0ecc5958ec in __clone3 () at ../sysdeps/unix/sysv/linux/x86_64/clone3.S:81
# snapshot: 2 1795340531.949460931
Thread 1 (LWP 23950 "mt"):
#0  0x00007f0ecc55fdf2 in __libc_pause () at ../sysdeps/unix/sysv/linux/pause.c:29
#1  0x000055ceb2672299 in main () at /tmp/g/mt.c:11
#2  0x00007f0ecc4b324a in __libc_start_call_main () at ../sysdeps/nptl/libc_start_call_main.h:58
#3  0x00007f0ecc4b3305 in __libc_start_main_impl () at ../csu/libc-start.c:360
#4  0x000055ceb26720a1 in _start () from /tmp/g/mt

Thread 2 (LWP 23952 "worker-a"):
#0  0x000055ceb26721a4 in spin_a () at /tmp/g/mt.c:6
#1  0x000055ceb26721e7 in ta () at /tmp/g/mt.c:8
#2  0x00007f0ecc5151f5 in start_thread () at ./nptl/pthread_create.c:442
#3  0x00007f0ecc5958ec in __clone3 () at ../sysdeps/unix/sysv/linux/x86_64/clone3.S:81

Thread 3 (LWP 23953 "worker-b"):
#0  0x000055ceb2672204 in spin_b () at /tmp/g/mt.c:7
#1  0x000055ceb267223f in tb () at /tmp/g/mt.c:9
#2  0x00007f0ecc5151f5 in start_thread () at ./nptl/pthread_create.c:442
#3  0x00007f0ecc5958ec in __clone3 () at ../sysdeps/unix/sysv/linux/x86_64/clone3.S:81

Thread 4 (LWP 23954 "sleeper"):
#0  0x00007f0ecc55b545 in __GI___clock_nanosleep () at ../sysdeps/unix/sysv/linux/clock_nanosleep.c:48
#1  0x00007f0ecc55fe53 in __GI___nanosleep () at ../sysdeps/unix/sysv/linux/nanosleep.c:25
#2  0x00007f0ecc58b295 in usleep () at ../sysdeps/posix/usleep.c:31
#3  0x000055ceb267218d in tc () at /tmp/g/mt.c:10
#4  0x00007f0ecc5151f5 in start_thread () at ./nptl/pthread_create.c:442
#5  0x00007f0ecc5958ec in __clone3 () at ../sysdeps/unix/sysv/linux/x86_64/clone3.S:81
# end: 1795340533.845635112 duration
