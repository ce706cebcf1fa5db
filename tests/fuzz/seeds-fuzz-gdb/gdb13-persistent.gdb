# profview-gdb 1
# pid: 23950
# program: /tmp/g/mt
# mode: persistent
# interval-ns: 100000000
# start: 1795340527.696276427
# dumper: GNU gdb (Debian 13.1-3) 13.1
# snapshot: 1 1795340527.891542765
Thread 4 (Thread 0x7f0ecb4866c0 (LWP 23954) "sleeper"):
#0  0x00007f0ecc55b545 in __GI___clock_nanosleep (clock_id=clock_id@entry=0, flags=flags@entry=0, req=req@entry=0x7f0ecb485ea0, rem=rem@entry=0x0) at ../sysdeps/unix/sysv/linux/clock_nanosleep.c:48
#1  0x00007f0ecc55fe53 in __GI___nanosleep (req=req@entry=0x7f0ecb485ea0, rem=rem@entry=0x0) at ../sysdeps/unix/sysv/linux/nanosleep.c:25
#2  0x00007f0ecc58b295 in usleep (useconds=useconds@entry=100000) at ../sysdeps/posix/usleep.c:31
#3  0x000055ceb267218d in tc (x=<optimized out>) at mt.c:10
#4  0x00007f0ecc5151f5 in start_thread (arg=<optimized out>) at ./nptl/pthread_create.c:442
#5  0x00007f0ecc5958ec in clone3 () at ../sysdeps/unix/sysv/linux/x86_64/clone3.S:81

Thread 3 (Thread 0x7f0ecbc876c0 (LWP 23953) "worker-b"):
#0  0x000055ceb267220c in spin_b () at mt.c:7
#1  0x000055ceb267223f in tb (x=<optimized out>) at mt.c:9
#2  0x00007f0ecc5151f5 in start_thread (arg=<optimized out>) at ./nptl/pthread_create.c:442
#3  0x00007f0ecc5958ec in clone3 () at ../sysdeps/unix/sysv/linux/x86_64/clone3.S:81

Thread 2 (Thread 0x7f0ecc4886c0 (LWP 23952) "worker-a"):
#0  0x000055ceb26721b4 in spin_a () at mt.c:6
#1  0x000055ceb26721e7 in ta (x=<optimized out>) at mt.c:8
#2  0x00007f0ecc5151f5 in start_thread (arg=<optimized out>) at ./nptl/pthread_create.c:442
#3  0x00007f0ecc5958ec in clone3 () at ../sysdeps/unix/sysv/linux/x86_64/clone3.S:81

Thread 1 (Thread 0x7f0ecc489740 (LWP 23950) "mt"):
#0  0x00007f0ecc55fdf2 in __libc_pause () at ../sysdeps/unix/sysv/linux/pause.c:29
#1  0x000055ceb2672299 in main () at mt.c:11
# snapshot: 2 1795340527.997991218
Thread 4 (Thread 0x7f0ecb4866c0 (LWP 23954) "sleeper"):
#0  0x00007f0ecc55b545 in __GI___clock_nanosleep (clock_id=clock_id@entry=0, flags=flags@entry=0, req=req@entry=0x7f0ecb485ea0, rem=rem@entry=0x0) at ../sysdeps/unix/sysv/linux/clock_nanosleep.c:48
#1  0x00007f0ecc55fe53 in __GI___nanosleep (req=req@entry=0x7f0ecb485ea0, rem=rem@entry=0x0) at ../sysdeps/unix/sysv/linux/nanosleep.c:25
#2  0x00007f0ecc58b295 in usleep (useconds=useconds@entry=100000) at ../sysdeps/posix/usleep.c:31
#3  0x000055ceb267218d in tc (x=<optimized out>) at mt.c:10
#4  0x00007f0ecc5151f5 in start_thread (arg=<optimized out>) at ./nptl/pthread_create.c:442
#5  0x00007f0ecc5958ec in clone3 () at ../sysdeps/unix/sysv/linux/x86_64/clone3.S:81

Thread 3 (Thread 0x7f0ecbc876c0 (LWP 23953) "worker-b"):
#0  0x000055ceb2672204 in spin_b () at mt.c:7
#1  0x000055ceb267223f in tb (x=<optimized out>) at mt.c:9
#2  0x00007f0ecc5151f5 in start_thread (arg=<optimized out>) at ./nptl/pthread_create.c:442
#3  0x00007f0ecc5958ec in clone3 () at ../sysdeps/unix/sysv/linux/x86_64/clone3.S:81

Thread 2 (Thread 0x7f0ecc4886c0 (LWP 23952) "worker-a"):
#0  0x000055ceb26721b4 in spin_a () at mt.c:6
#1  0x000055ceb26721e7 in ta (x=<optimized out>) at mt.c:8
#2  0x00007f0ecc5151f5 in start_thread (arg=<optimized out>) at ./nptl/pthread_create.c:442
#3  0x00007f0ecc5958ec in clone3 () at ../sysdeps/unix/sysv/linux/x86_64/clone3.S:81

Thread 1 (Thread 0x7f0ecc489740 (LWP 23950) "mt"):
#0  0x00007f0ecc55fdf2 in __libc_pause () at ../sysdeps/unix/sysv/linux/pause.c:29
#1  0x000055ceb2672299 in main () at mt.c:11
# snapshot: 3 1795340528.093192502
Thread 4 (Thread 0x7f0ecb4866c0 (LWP 23954) "sleeper"):
#0  0x00007f0ecc55b545 in __GI___clock_nanosleep (clock_id=clock_id@entry=0, flags=flags@entry=0, req=req@entry=0x7f0ecb485ea0, rem=rem@entry=0x0) at ../sysdeps/unix/sysv/linux/clock_nanosleep.c:48
#1  0x00007f0ecc55fe53 in __GI___nanosleep (req=req@entry=0x7f0ecb485ea0, rem=rem@entry=0x0) at ../sysdeps/unix/sysv/linux/nanosleep.c:25
#2  0x00007f0ecc58b295 in usleep (useconds=useconds@entry=100000) at ../sysdeps/posix/usleep.c:31
#3  0x000055ceb267218d in tc (x=<optimized out>) at mt.c:10
#4  0x00007f0ecc5151f5 in start_thread (arg=<optimized out>) at ./nptl/pthread_create.c:442
#5  0x00007f0ecc5958ec in clone3 () at ../sysdeps/unix/sysv/linux/x86_64/clone3.S:81

Thread 3 (Thread 0x7f0ecbc876c0 (LWP 23953) "worker-b"):
#0  0x000055ceb26721fc in spin_b () at mt.c:7
#1  0x000055ceb267223f in tb (x=<optimized out>) at mt.c:9
#2  0x00007f0ecc5151f5 in start_thread (arg=<optimized out>) at ./nptl/pthread_create.c:442
#3  0x00007f0ecc5958ec in clone3 () at ../sysdeps/unix/sysv/linux/x86_64/clone3.S:81

Thread 2 (Thread 0x7f0ecc4886c0 (LWP 23952) "worker-a"):
#0  0x000055ceb26721a4 in spin_a () at mt.c:6
#1  0x000055ceb26721e7 in ta (x=<optimized out>) at mt.c:8
#2  0x00007f0ecc5151f5 in start_thread (arg=<optimized out>) at ./nptl/pthread_create.c:442
#3  0x00007f0ecc5958ec in clone3 () at ../sysdeps/unix/sysv/linux/x86_64/clone3.S:81

Thread 1 (Thread 0x7f0ecc489740 (LWP 23950) "mt"):
#0  0x00007f0ecc55fdf2 in __libc_pause () at ../sysdeps/unix/sysv/linux/pause.c:29
#1  0x000055ceb2672299 in main () at mt.c:11
# end: 1795340529.725526562 duration
