/* ODE's threading implementation lent to lcpkit's parallel sweeps (lk_problem_set_executor).
 *
 * ODE runs work on threads through a threading implementation (include/ode/threading.h): calls are posted with
 * dependencies between them, and a wait blocks until a call and everything it depends on have run. A
 * dThreadingThreadPool serves the built-in implementation on its own threads; dWorldSetStepThreadingImplementation
 * gives it to a world's steps. A sweep of lcpkit's part or colour order asks, colour by colour, for N tasks that
 * touch disjoint bodies and return (lcpkit.h, lk_executor). Here the caller runs the first task of a colour
 * and posts the others to the implementation, all releasing one joining call that the caller then waits for:
 * the shape ODE's own island stepping uses. So the sweeps (and the adapter's reading of the rows,
 * lk_problem_run_tasks) run on the pool's threads, which would otherwise wait for the step while lcpkit's own
 * threads competed with them for the cores. ODE's threads sleep between calls, so a colour waits for one to
 * wake: measured no faster than one thread (docs/ode.md, "Threads"). */
#include "ode_internal.h"

#include <string.h>

/* ThreadSanitizer does not see the order ODE's threading implementation keeps between a call and the wait for it
 * (its atomics are in libode, which is not instrumented): the tasks' end and the wait's return are told to it
 * as a release and an acquire on the job, the order ODE gives them. */
#if defined(__SANITIZE_THREAD__)
#define LK_ODE_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LK_ODE_TSAN 1
#endif
#endif
#ifdef LK_ODE_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define TSAN_ACQUIRE(x) __tsan_acquire(x)
#define TSAN_RELEASE(x) __tsan_release(x)
#else
#define TSAN_ACQUIRE(x) ((void)(x))
#define TSAN_RELEASE(x) ((void)(x))
#endif

typedef struct ode_job {
	lk_task_fn task;
	void *arg;
} ode_job;

static int run_task(void *context, dcallindex_t index, dCallReleaseeID releasee)
{
	(void)releasee;
	ode_job *job = context;
	TSAN_ACQUIRE(job);
	job->task(job->arg, (int)index);
	TSAN_RELEASE(job);
	return 1;
}

/* The joining call: it runs once every task has, and the caller's wait ends with it. */
static int join_tasks(void *context, dcallindex_t index, dCallReleaseeID releasee)
{
	(void)context;
	(void)index;
	(void)releasee;
	return 1;
}

static void run_on_ode(void *context, int tasks, lk_task_fn task, void *arg)
{
	lk__ode_threading *t = context;
	const dThreadingFunctionsInfo *f = t->functions;
	if (tasks <= 1) {
		for (int i = 0; i < tasks; ++i)
			task(arg, i);
		return;
	}
	ode_job job = {task, arg};
	TSAN_RELEASE(&job);
	dCallReleaseeID join = NULL;
	f->reset_call_wait(t->impl, t->wait);
	f->post_call(t->impl, NULL, &join, (ddependencycount_t)tasks - 1, NULL, t->wait, join_tasks, NULL, 0,
	             "lcpkit colour");
	for (int i = 1; i < tasks; ++i)
		f->post_call(t->impl, NULL, NULL, 0, join, NULL, run_task, &job, (dcallindex_t)i, "lcpkit sweep");
	/* the caller runs the first task while the pool's threads take the others */
	job.task(job.arg, 0);
	f->wait_call(t->impl, NULL, t->wait, NULL, "lcpkit colour");
	TSAN_ACQUIRE(&job);
}

void lk__ode_threading_release(lk__ode_threading *t)
{
	if (t->wait)
		t->functions->free_call_wait(t->impl, t->wait);
	memset(t, 0, sizeof *t);
}

lk_status lk_ode_set_threading(lk_ode *ctx, const dThreadingFunctionsInfo *functions_info,
                               dThreadingImplementationID impl)
{
	if (!ctx)
		return LK_ERR_INVALID_ARGUMENT;
	if (!functions_info != !impl)
		return lk__ode_fail(ctx, LK_ERR_INVALID_ARGUMENT,
		                    "lk_ode_set_threading: functions_info and impl are both given or both NULL");
	const dThreadingFunctionsInfo *f = functions_info;
	if (f && (f->struct_size < sizeof *f || !f->alloc_call_wait || !f->reset_call_wait || !f->free_call_wait ||
	          !f->post_call || !f->wait_call || !f->retrieve_thread_count ||
	          !f->preallocate_resources_for_calls))
		return lk__ode_fail(ctx, LK_ERR_INVALID_ARGUMENT,
		                    "lk_ode_set_threading: functions_info lacks functions a threading implementation "
		                    "has (struct_size %u)", f->struct_size);
	dCallWaitID wait = f ? f->alloc_call_wait(impl) : NULL;
	if (f && !wait)
		return lk__ode_fail(ctx, LK_ERR_NO_MEMORY, "lk_ode_set_threading: the implementation has no call wait");
	lk__ode_threading_release(&ctx->threading);
	ctx->threading.functions = f;
	ctx->threading.impl = impl;
	ctx->threading.wait = wait;
	/* the problem stops using the lent implementation until the next solve asks for it */
	if (ctx->threading_lent) {
		lk_problem_set_executor(ctx->problem, NULL);
		ctx->threading_lent = 0;
	}
	return LK_OK;
}

void lk__ode_threading_lend(lk_ode *ctx, const lk_solver_config *cfg)
{
	const lk__ode_threading *t = &ctx->threading;
	/* lent when the solve sweeps on threads and the implementation runs more than one, and it has room for
	 * the calls of a colour (the tasks and the joining call) */
	int lend = cfg->threads > 1 && t->impl && t->functions->retrieve_thread_count(t->impl) > 1 &&
	           t->functions->preallocate_resources_for_calls(t->impl, (ddependencycount_t)cfg->threads + 1);
	if (lend == ctx->threading_lent)
		return;
	const lk_executor ode = {run_on_ode, &ctx->threading};
	lk_problem_set_executor(ctx->problem, lend ? &ode : NULL);
	ctx->threading_lent = lend;
}
