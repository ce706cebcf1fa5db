/* javaname.h - Java method names as JIT perf maps spell them, made short
 *
 * Three spellings reach a profile through perf's map files
 * (/tmp/perf-PID.map) and the agents that write them:
 *   JVM descriptors:   "Lio/netty/util/Foo$4;.run()V", "Ljava/lang/Thread;::run"
 *   class::method:     "java.lang.Thread::run()V"
 *   HotSpot's own map: "java.lang.String Spin.text(int)", "byte[] java.util.Arrays.copyOf(byte[], int)"
 * Their short name is the class, a dot and the method, as Java writes a
 * method: "io.netty.util.Foo$4.run", "java.lang.Thread.run", "Spin.text".
 * With its parameter list (to tell overloads apart) the list is kept as it
 * was spelt: "Spin.text(int)", "java.lang.Thread.run()V".
 */
#ifndef PROFVIEW_JAVANAME_H
#define PROFVIEW_JAVANAME_H

#include <stdbool.h>

/* name short, malloc'ed into *out (the caller frees it), with its
 * parameter list when params; 1 when name is a Java method as above, 0
 * when it is not (*out untouched), -1 when out of memory (reported). */
int javaname_shorten(const char *name, bool params, char **out);

#endif
