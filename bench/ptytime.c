/* ptytime.c - microseconds from exec to the first prompt of an interactive program in a pty. */
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double
now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* Usage: ptytime RUNS PROGRAM [ARGS...]; prints the mean time to "> ". */
int
main(int argc, char **argv)
{
	int runs, r, fd, status;
	double total = 0;

	if (argc < 3 || (runs = atoi(argv[1])) < 1) {
		fprintf(stderr, "usage: ptytime RUNS PROGRAM [ARGS...]\n");
		return 2;
	}
	for (r = 0; r < runs; r++) {
		char buf[4096];
		size_t have = 0;
		double t0 = now_us();
		pid_t pid = forkpty(&fd, NULL, NULL, NULL);

		if (pid < 0) {
			perror("forkpty");
			return 1;
		}
		if (pid == 0) {
			setenv("TESSEL_HISTORY", "/dev/null", 1);
			execvp(argv[2], argv + 2);
			_exit(127);
		}
		for (;;) {
			ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
			if (n <= 0)
				break;
			have += (size_t)n;
			buf[have] = '\0';
			if (strstr(buf, "> "))
				break;
			if (have >= sizeof buf - 1)
				have = 0;
		}
		total += now_us() - t0;
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		close(fd);
	}
	printf("%.0f\n", total / runs);
	return 0;
}
