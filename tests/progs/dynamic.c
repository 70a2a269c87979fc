/* Dynamic processes. One program plays every part, chosen by argv[1]:
 *   spawn N        the job spawns N copies of itself ("child"), then parents and children
 *                  exchange data over the intercommunicator: point-to-point both ways, MPI_Bcast
 * and MPI_Allreduce across it, MPI_Intercomm_merge, then MPI_Comm_disconnect multiple
 * MPI_Comm_spawn_multiple of two commands ("child_a" x1 with wdir=/tmp and an env entry, "child_b"
 * x2 with host=<this host>); each child reports what it saw fail           MPI_Comm_spawn of a
 * program that does not exist: MPI_ERR_SPAWN, errcodes filled early          MPI_Comm_spawn of a
 * program that ends without connecting: MPI_ERR_SPAWN ports          two halves of one job:
 * MPI_Open_port, MPI_Publish_name, MPI_Lookup_name, MPI_Comm_accept / MPI_Comm_connect, data,
 * MPI_Unpublish_name, MPI_Close_port server FILE    writes an open port's name to FILE and accepts;
 * client FILE reads and connects join           two ranks of one job: MPI_Comm_join over a TCP
 * socket on 127.0.0.1 Children print their checks as rank 100 + their rank, so a job's lines tell
 * parents from children. */
#include <arpa/inet.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"

static char g_self[PATH_MAX];
static char g_lib[64]; /* the first word of MPI_Get_library_version: "torusmpi", "Open" */

static void library_name(void) {
  char v[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(v, &len);
  snprintf(g_lib, sizeof g_lib, "%.*s", (int)strcspn(v, " "), v);
}

/* The exchanges every parent/child pair of groups runs over intercomm: `parent` says which side
 * this process is on, `other_job` whether the other group is another job; remote is the other
 * group's size. */
static void exchange(MPI_Comm inter, int parent, int other_job) {
  int rank, size, remote;
  MPI_Comm_rank(inter, &rank);
  MPI_Comm_size(inter, &size);
  MPI_Comm_remote_size(inter, &remote);
  int flag = 0;
  MPI_Comm_test_inter(inter, &flag);
  check(flag, "the new communicator is an intercommunicator", "test_inter says %d", flag);

  /* Point-to-point both ways: local rank 0 sends to every remote rank, every rank answers the
   * other group's rank 0, and rank 0 hears from each remote rank. */
  int out[64];
  MPI_Request reqs[64];
  if (rank == 0) {
    for (int r = 0; r < remote && r < 64; ++r) {
      out[r] = (parent ? 1000 : 2000) + r;
      MPI_Isend(&out[r], 1, MPI_INT, r, 7, inter, &reqs[r]);
    }
  }
  {
    int v = -1;
    MPI_Status st;
    MPI_Recv(&v, 1, MPI_INT, 0, 7, inter, &st);
    check(v == (parent ? 2000 : 1000) + rank && st.MPI_SOURCE == 0,
          "p2p: message from the other group's rank 0", "got %d from %d", v, st.MPI_SOURCE);
    v = (parent ? 1000 : 2000) + 500 + rank;
    MPI_Send(&v, 1, MPI_INT, 0, 8, inter);
  }
  if (rank == 0) {
    int bad = 0;
    for (int r = 0; r < remote; ++r) {
      int v = -1;
      MPI_Recv(&v, 1, MPI_INT, r, 8, inter, MPI_STATUS_IGNORE);
      if (v != (parent ? 2000 : 1000) + 500 + r) bad++;
    }
    check(bad == 0, "p2p: replies from every remote rank", "%d wrong", bad);
    MPI_Waitall(remote < 64 ? remote : 64, reqs, MPI_STATUSES_IGNORE);
  }

  /* Bcast across: the parents' rank 0 is the root. */
  int b[4] = {0, 0, 0, 0};
  int root;
  if (parent) {
    root = rank == 0 ? MPI_ROOT : MPI_PROC_NULL;
    if (rank == 0) b[0] = 11, b[1] = 22, b[2] = 33, b[3] = 44;
  } else {
    root = 0;
  }
  check_rc(MPI_Bcast(b, 4, MPI_INT, root, inter), "MPI_Bcast over the intercommunicator");
  if (!parent) {
    check(b[0] == 11 && b[3] == 44, "bcast: the parents' data", "got %d %d", b[0], b[3]);
  }

  /* Allreduce across: each group gets the sum of the other's. */
  int mine = parent ? 1 : 10, sum = -1;
  check_rc(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter),
           "MPI_Allreduce over the intercommunicator");
  int want = remote * (parent ? 10 : 1);
  check(sum == want, "allreduce: the other group's sum", "got %d, want %d", sum, want);

  /* Merge: parents first. */
  MPI_Comm merged;
  check_rc(MPI_Intercomm_merge(inter, parent ? 0 : 1, &merged), "MPI_Intercomm_merge");
  int mrank, msize;
  MPI_Comm_rank(merged, &mrank);
  MPI_Comm_size(merged, &msize);
  check(msize == size + remote, "merged size", "%d, want %d", msize, size + remote);
  check(mrank == (parent ? rank : remote + rank), "merged rank: parents first", "%d", mrank);
  int total = -1;
  MPI_Allreduce(&mrank, &total, 1, MPI_INT, MPI_SUM, merged);
  check(total == msize * (msize - 1) / 2, "allreduce over the merged communicator", "%d", total);
  int bb = mrank == 0 ? 99 : 0;
  MPI_Bcast(&bb, 1, MPI_INT, 0, merged);
  check(bb == 99, "bcast over the merged communicator", "%d", bb);
  /* Groups name processes of the other job too: translated into this job's world, the other
   * group's first process is no member, this one is itself. */
  MPI_Group mg, wg;
  MPI_Comm_group(merged, &mg);
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  int wrank, in[2] = {parent ? size : 0, mrank}, tr[2] = {-1, -1};
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Group_translate_ranks(mg, 2, in, wg, tr);
  if (other_job) {
    check(tr[0] == MPI_UNDEFINED && tr[1] == wrank, "group ranks translate across jobs",
          "got %d %d, want MPI_UNDEFINED %d", tr[0], tr[1], wrank);
  }
  MPI_Group_free(&mg);
  MPI_Group_free(&wg);
  MPI_Comm_free(&merged);
}

static int run_child(const char* kind, const char* lib) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  g_rank = 100 + rank;
  MPI_Comm parent;
  MPI_Comm_get_parent(&parent);
  check(parent != MPI_COMM_NULL, "MPI_Comm_get_parent gives the parents", "MPI_COMM_NULL");
  if (parent == MPI_COMM_NULL) return check_done(-1);
  check(lib != NULL && strcmp(lib, g_lib) == 0, "a spawned process runs its parents' library",
        "parents: %s, this process: %s", lib ? lib : "?", g_lib);
  if (strcmp(kind, "child") == 0) {
    exchange(parent, 0, 1);
  } else {
    /* spawn_multiple: report to the parents' rank 0 what this process sees. */
    char cwd[PATH_MAX] = "";
    if (getcwd(cwd, sizeof cwd) == NULL) cwd[0] = '\0';
    const char* var = getenv("DYN_VAR");
    int report[3];
    report[0] = strcmp(kind, "child_a") == 0 ? 1 : 2;
    report[1] = report[0] == 1 ? strcmp(cwd, "/tmp") == 0 : 1;
    report[2] = report[0] == 1 ? var != NULL && strcmp(var, "alpha") == 0 : 1;
    check(report[1], "wdir=/tmp is the working directory", "cwd %s", cwd);
    check(report[2], "env gives DYN_VAR=alpha", "DYN_VAR=%s", var ? var : "(unset)");
    check(size == 3, "one world for both commands", "size %d", size);
    MPI_Send(report, 3, MPI_INT, 0, 9, parent);
  }
  check_rc(MPI_Comm_disconnect(&parent), "MPI_Comm_disconnect (child)");
  MPI_Comm_get_parent(&parent);
  check(parent == MPI_COMM_NULL, "no parent after MPI_Comm_disconnect", "still a handle");
  MPI_Finalize();
  return check_done(-1);
}

static void do_spawn(int n) {
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char* args[] = {"child", g_lib, NULL};
  int codes[16];
  for (int i = 0; i < 16; ++i) codes[i] = -1;
  MPI_Comm inter;
  check_rc(MPI_Comm_spawn(g_self, args, n, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, codes),
           "MPI_Comm_spawn");
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += codes[i] != MPI_SUCCESS;
  check(bad == 0, "errcodes all MPI_SUCCESS", "%d not", bad);
  int remote = -1;
  MPI_Comm_remote_size(inter, &remote);
  check(remote == n, "remote size is the children's count", "%d", remote);
  exchange(inter, 1, 1);
  check_rc(MPI_Comm_disconnect(&inter), "MPI_Comm_disconnect (parent)");
  check(inter == MPI_COMM_NULL, "disconnect sets the handle to MPI_COMM_NULL", "not null");
}

static void do_multiple(void) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char host[256];
  gethostname(host, sizeof host);
  char* cmds[2] = {g_self, g_self};
  char* a_args[] = {"child_a", g_lib, NULL};
  char* b_args[] = {"child_b", g_lib, NULL};
  char** argvs[2] = {a_args, b_args};
  int procs[2] = {1, 2};
  MPI_Info infos[2];
  MPI_Info_create(&infos[0]);
  MPI_Info_set(infos[0], "wdir", "/tmp");
  MPI_Info_set(infos[0], "env", "DYN_VAR=alpha\nDYN_OTHER=beta");
  MPI_Info_create(&infos[1]);
  MPI_Info_set(infos[1], "host", host);
  MPI_Comm inter;
  int codes[3] = {-1, -1, -1};
  check_rc(MPI_Comm_spawn_multiple(2, cmds, argvs, procs, infos, 0, MPI_COMM_WORLD, &inter, codes),
           "MPI_Comm_spawn_multiple");
  check(codes[0] == MPI_SUCCESS && codes[2] == MPI_SUCCESS, "errcodes all MPI_SUCCESS", "%d %d",
        codes[0], codes[2]);
  if (rank == 0) {
    int kinds[3] = {0, 0, 0};
    for (int r = 0; r < 3; ++r) {
      int report[3] = {0, 0, 0};
      MPI_Recv(report, 3, MPI_INT, r, 9, inter, MPI_STATUS_IGNORE);
      kinds[r] = report[0];
      check(report[1] && report[2], "a child saw its wdir and env", "child %d: %d %d", r, report[1],
            report[2]);
    }
    check(kinds[0] == 1 && kinds[1] == 2 && kinds[2] == 2, "children in command order", "%d %d %d",
          kinds[0], kinds[1], kinds[2]);
  }
  check_rc(MPI_Comm_disconnect(&inter), "MPI_Comm_disconnect (parent)");
  MPI_Info_free(&infos[0]);
  MPI_Info_free(&infos[1]);
}

static void do_fail(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int codes[2] = {-1, -1};
  MPI_Comm inter = MPI_COMM_WORLD;
  int rc = MPI_Comm_spawn("/nonexistent/dynamic-no-such-program", MPI_ARGV_NULL, 2, MPI_INFO_NULL,
                          0, MPI_COMM_WORLD, &inter, codes);
  int cls = -1;
  MPI_Error_class(rc, &cls);
  check(cls == MPI_ERR_SPAWN, "spawning a missing program: MPI_ERR_SPAWN", "class %d", cls);
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  printf("# error string: %s\n", text);
  check(inter == MPI_COMM_NULL, "intercomm is MPI_COMM_NULL", "not null");
  check(codes[0] != MPI_SUCCESS && codes[1] != MPI_SUCCESS, "errcodes say failure", "%d %d",
        codes[0], codes[1]);
}

/* A program that starts and ends without connecting (not an MPI program): MPI_ERR_SPAWN once
 * the launcher says it has ended, not a wait for the time-out. */
static void do_early(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int codes[2] = {-1, -1};
  MPI_Comm inter = MPI_COMM_WORLD;
  int rc = MPI_Comm_spawn("/bin/true", MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                          codes);
  int cls = -1;
  MPI_Error_class(rc, &cls);
  check(cls == MPI_ERR_SPAWN, "spawned processes that never connect: MPI_ERR_SPAWN", "class %d",
        cls);
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  printf("# error string: %s\n", text);
  check(inter == MPI_COMM_NULL && codes[1] != MPI_SUCCESS, "no intercomm, errcodes filled", "%d",
        codes[1]);
}

/* The two halves of the world: the lower accepts, the upper connects. */
static void do_ports(void) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int lower = rank < size / 2;
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, lower, rank, &half);
  char port[MPI_MAX_PORT_NAME] = "";
  char found[MPI_MAX_PORT_NAME] = "";
  const char* service = "torusmpi-dynamic-test";
  if (lower && rank == 0) {
    check_rc(MPI_Open_port(MPI_INFO_NULL, port), "MPI_Open_port");
    check_rc(MPI_Publish_name(service, MPI_INFO_NULL, port), "MPI_Publish_name");
  }
  MPI_Barrier(MPI_COMM_WORLD); /* published before anyone looks */
  MPI_Comm inter;
  if (lower) {
    check_rc(MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &inter), "MPI_Comm_accept");
  } else {
    if (rank == size / 2) {
      check_rc(MPI_Lookup_name(service, MPI_INFO_NULL, found), "MPI_Lookup_name");
    }
    check_rc(MPI_Comm_connect(found, MPI_INFO_NULL, 0, half, &inter), "MPI_Comm_connect");
  }
  exchange(inter, lower, 0);
  check_rc(MPI_Comm_disconnect(&inter), "MPI_Comm_disconnect");
  MPI_Barrier(MPI_COMM_WORLD);
  if (lower && rank == 0) {
    check_rc(MPI_Unpublish_name(service, MPI_INFO_NULL, port), "MPI_Unpublish_name");
    check_rc(MPI_Close_port(port), "MPI_Close_port");
    /* Open MPI's connect to a port nobody accepts on waits; torusmpi's fails. */
    if (strcmp(g_lib, "torusmpi") == 0) {
      MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
      MPI_Comm none = MPI_COMM_SELF;
      int rc = MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &none);
      int cls = -1;
      MPI_Error_class(rc, &cls);
      check(cls == MPI_ERR_PORT && none == MPI_COMM_NULL,
            "connecting to a closed port: MPI_ERR_PORT", "class %d", cls);
      rc = MPI_Comm_connect("not a port", MPI_INFO_NULL, 0, MPI_COMM_SELF, &none);
      MPI_Error_class(rc, &cls);
      check(cls == MPI_ERR_PORT, "connecting to a name that is no port: MPI_ERR_PORT", "class %d",
            cls);
    }
  }
  MPI_Comm_free(&half);
}

static void do_server(const char* file, int accept_side) {
  char port[MPI_MAX_PORT_NAME] = "";
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm inter;
  if (accept_side) {
    if (rank == 0) {
      check_rc(MPI_Open_port(MPI_INFO_NULL, port), "MPI_Open_port");
      char tmp[PATH_MAX];
      snprintf(tmp, sizeof tmp, "%s.tmp", file);
      FILE* f = fopen(tmp, "w");
      fprintf(f, "%s\n", port);
      fclose(f);
      rename(tmp, file);
    }
    check_rc(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter), "MPI_Comm_accept");
  } else {
    if (rank == 0) {
      FILE* f = NULL;
      for (int i = 0; i < 600 && (f = fopen(file, "r")) == NULL; ++i) usleep(50000);
      if (f != NULL) {
        if (fgets(port, sizeof port, f) == NULL) port[0] = '\0';
        port[strcspn(port, "\n")] = '\0';
        fclose(f);
      }
      check(port[0] != '\0', "the server's port name", "none in %s", file);
    }
    check_rc(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter), "MPI_Comm_connect");
  }
  exchange(inter, accept_side, 1);
  check_rc(MPI_Comm_disconnect(&inter), "MPI_Comm_disconnect");
  if (accept_side && rank == 0) check_rc(MPI_Close_port(port), "MPI_Close_port");
}

/* MPI_THREAD_MULTIPLE: rank 0 waits in MPI_Comm_accept on one thread while its main thread
 * exchanges messages with rank 1; only then does rank 1 connect. An accept that kept the
 * library's lock would stop the main thread (the job then hangs). */
static char g_port[MPI_MAX_PORT_NAME];
static MPI_Comm g_accepted = MPI_COMM_NULL;

static void* accept_thread(void* arg) {
  (void)arg;
  MPI_Comm_accept(g_port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &g_accepted);
  return NULL;
}

static void do_threaded(void) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank > 1) return;
  MPI_Comm inter = MPI_COMM_NULL;
  if (rank == 0) {
    check_rc(MPI_Open_port(MPI_INFO_NULL, g_port), "MPI_Open_port");
    pthread_t t;
    pthread_create(&t, NULL, accept_thread, NULL);
    int v = 0;
    for (int i = 0; i < 100; ++i) {
      MPI_Send(&i, 1, MPI_INT, 1, 4, MPI_COMM_WORLD);
      MPI_Recv(&v, 1, MPI_INT, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    check(v == 99, "ping-pong while another thread waits in MPI_Comm_accept", "last %d", v);
    MPI_Send(g_port, MPI_MAX_PORT_NAME, MPI_CHAR, 1, 6, MPI_COMM_WORLD);
    pthread_join(t, NULL);
    inter = g_accepted;
    check(inter != MPI_COMM_NULL, "the accepting thread got its intercommunicator", "null");
  } else {
    int v;
    for (int i = 0; i < 100; ++i) {
      MPI_Recv(&v, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&v, 1, MPI_INT, 0, 4, MPI_COMM_WORLD);
    }
    char port[MPI_MAX_PORT_NAME];
    MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    check_rc(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter), "MPI_Comm_connect");
  }
  if (inter == MPI_COMM_NULL) return;
  int out = 7 + rank, got = -1;
  MPI_Sendrecv(&out, 1, MPI_INT, 0, 5, &got, 1, MPI_INT, 0, 5, inter, MPI_STATUS_IGNORE);
  check(got == 8 - rank, "data over the accepted intercommunicator", "got %d", got);
  check_rc(MPI_Comm_disconnect(&inter), "MPI_Comm_disconnect");
  if (rank == 0) check_rc(MPI_Close_port(g_port), "MPI_Close_port");
}

static void do_join(void) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank > 1) return;
  int fd = -1;
  if (rank == 0) {
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    bind(lfd, (struct sockaddr*)&a, sizeof a);
    listen(lfd, 1);
    getsockname(lfd, (struct sockaddr*)&a, &len);
    int port = ntohs(a.sin_port);
    MPI_Send(&port, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
    fd = accept(lfd, NULL, NULL);
    close(lfd);
  } else {
    int port = 0;
    MPI_Recv(&port, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((unsigned short)port);
    if (connect(fd, (struct sockaddr*)&a, sizeof a) != 0) fd = -1;
  }
  check(fd >= 0, "a TCP socket between ranks 0 and 1", "fd %d", fd);
  MPI_Comm inter;
  check_rc(MPI_Comm_join(fd, &inter), "MPI_Comm_join");
  int remote = -1;
  MPI_Comm_remote_size(inter, &remote);
  check(remote == 1, "join: one remote process", "%d", remote);
  int v = 100 + rank, got = -1;
  MPI_Sendrecv(&v, 1, MPI_INT, 0, 5, &got, 1, MPI_INT, 0, 5, inter, MPI_STATUS_IGNORE);
  check(got == 101 - rank, "join: data both ways", "got %d", got);
  check_rc(MPI_Comm_disconnect(&inter), "MPI_Comm_disconnect");
  close(fd);
}

int main(int argc, char** argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (realpath(argv[0], g_self) == NULL) snprintf(g_self, sizeof g_self, "%s", argv[0]);
  const char* mode = argc > 1 ? argv[1] : "spawn";
  library_name();
  if (strncmp(mode, "child", 5) == 0) return run_child(mode, argc > 2 ? argv[2] : NULL);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  g_rank = rank;
  MPI_Comm parent;
  MPI_Comm_get_parent(&parent);
  check(parent == MPI_COMM_NULL, "a job mpirun started has no parent", "a handle");
  if (strcmp(mode, "spawn") == 0) {
    do_spawn(argc > 2 ? atoi(argv[2]) : 1);
  } else if (strcmp(mode, "multiple") == 0) {
    do_multiple();
  } else if (strcmp(mode, "fail") == 0) {
    do_fail();
  } else if (strcmp(mode, "early") == 0) {
    do_early();
  } else if (strcmp(mode, "ports") == 0) {
    do_ports();
  } else if (strcmp(mode, "server") == 0 || strcmp(mode, "client") == 0) {
    do_server(argc > 2 ? argv[2] : "port.txt", strcmp(mode, "server") == 0);
  } else if (strcmp(mode, "threaded") == 0) {
    do_threaded();
  } else if (strcmp(mode, "join") == 0) {
    do_join();
  }
  MPI_Finalize();
  return check_done(size);
}
