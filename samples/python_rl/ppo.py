#!/usr/bin/env python3
"""PPO on MuJoCo Hopper (or a numpy reacher), in plain numpy, annotated for rlscope.

A small, real deep-RL training run for rlscope to profile, shaped like the RL-Scope paper's
workloads: each iteration collects --steps-per-iteration environment steps with the current
policy, then takes --epochs passes of minibatch gradient steps on the PPO loss (Schulman et al.
2017): the clipped surrogate objective on advantages from generalised advantage estimation (GAE),
plus a squared-error value baseline. The policy is a diagonal Gaussian whose mean is a tanh MLP
and whose log standard deviation is a learned vector; the value function is a separate MLP. Both
are written out in numpy (forward, backward, Adam) so the sample needs no ML framework. Defaults
follow common PPO settings for MuJoCo (e.g. CleanRL's ppo_continuous_action).

rlscope sees the algorithm's operations through its annotations: "inference" (choosing an
action), "simulation" (the environment), "backpropagation" (the PPO update), each inside a
"training_loop" operation per iteration. Without the rlscope package the annotations are no-ops.

Everything is deterministic given --seed (and the same numpy and MuJoCo builds).
"""

import argparse
import sys
import time

try:
    import numpy as np
except ImportError:
    sys.exit("ppo.py: numpy is required (pip install numpy)")

try:
    import rlscope

    ANNOTATIONS = True
except ImportError:
    import rlscope_fallback as rlscope

    ANNOTATIONS = False

from numpy_env import ReacherEnv

GAMMA = 0.99
GAE_LAMBDA = 0.95
CLIP = 0.2
LEARNING_RATE = 3e-4
VALUE_COEF = 0.5
MAX_GRAD_NORM = 0.5

GYM_ENVS = {"hopper": "Hopper", "walker2d": "Walker2d"}


# --- Environments ------------------------------------------------------------------------------


def mujoco_available():
    """Whether gymnasium's MuJoCo environments load (they need mujoco and imageio too)."""
    try:
        import gymnasium.envs.mujoco  # noqa: F401
        import mujoco  # noqa: F401
    except ImportError:
        return False
    return True


def make_env(choice):
    """Returns (env, name) for --env; "auto" is Hopper when MuJoCo is usable, else numpy."""
    if choice == "auto":
        choice = "hopper" if mujoco_available() else "numpy"
    if choice == "numpy":
        return ReacherEnv(), "numpy-reacher"
    if not mujoco_available():
        sys.exit(
            f'ppo.py: --env {choice} needs gymnasium with MuJoCo (pip install "gymnasium[mujoco]")'
        )
    import gymnasium

    # Hopper-v5 and Walker2d-v5 came with gymnasium 1.0; older releases have v4.
    for version in ("v5", "v4"):
        env_id = f"{GYM_ENVS[choice]}-{version}"
        try:
            return gymnasium.make(env_id), env_id
        except gymnasium.error.Error:
            continue
    sys.exit(f"ppo.py: gymnasium has neither {GYM_ENVS[choice]}-v5 nor -v4")


class ObsNormalizer:
    """Running mean and variance of observations; the usual PPO input normalisation."""

    def __init__(self, size):
        self.mean = np.zeros(size)
        self.var = np.ones(size)
        self.count = 1e-4

    def __call__(self, obs):
        return np.clip((obs - self.mean) / np.sqrt(self.var + 1e-8), -10.0, 10.0)

    def update(self, batch):
        """Merges a batch's statistics into the running ones (Chan et al.'s parallel update)."""
        n, mean, var = len(batch), batch.mean(axis=0), batch.var(axis=0)
        delta, total = mean - self.mean, self.count + n
        self.mean = self.mean + delta * n / total
        self.var = (self.var * self.count + var * n + delta**2 * self.count * n / total) / total
        self.count = total


# --- Networks ----------------------------------------------------------------------------------


def orthogonal(rows, cols, gain, rng):
    """An orthogonal weight matrix scaled by `gain` (Saxe et al. 2014), standard for PPO."""
    a = rng.standard_normal((max(rows, cols), min(rows, cols)))
    q, r = np.linalg.qr(a)
    q = q * np.sign(np.diag(r))  # makes the distribution uniform over orthogonal matrices
    return gain * (q if rows >= cols else q.T)


class MLP:
    """Fully connected network, tanh hidden layers, linear output; parameters [W1, b1, W2, ...]."""

    def __init__(self, sizes, out_gain, rng):
        self.params = []
        for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
            gain = out_gain if i == len(sizes) - 2 else np.sqrt(2.0)
            self.params += [orthogonal(n_in, n_out, gain, rng), np.zeros(n_out)]

    def forward(self, x):
        """Returns the output and each layer's input, which backward() needs."""
        inputs = []
        n_layers = len(self.params) // 2
        for k in range(n_layers):
            inputs.append(x)
            x = x @ self.params[2 * k] + self.params[2 * k + 1]
            if k < n_layers - 1:
                x = np.tanh(x)
        return x, inputs

    def backward(self, inputs, grad_out):
        """Gradients of the loss with respect to the parameters, given d loss / d output."""
        grads = [None] * len(self.params)
        for k in reversed(range(len(inputs))):
            grads[2 * k] = inputs[k].T @ grad_out
            grads[2 * k + 1] = grad_out.sum(axis=0)
            if k > 0:  # inputs[k] = tanh(z), and tanh'(z) = 1 - tanh(z)^2
                grad_out = (grad_out @ self.params[2 * k].T) * (1.0 - inputs[k] ** 2)
        return grads


class Agent:
    """Gaussian policy pi(a | s) = N(mu(s), diag(exp(log_std))^2) and value function V(s)."""

    def __init__(self, obs_size, act_size, hidden, rng):
        self.mu = MLP([obs_size, hidden, hidden, act_size], out_gain=0.01, rng=rng)
        self.log_std = np.zeros(act_size)
        self.value = MLP([obs_size, hidden, hidden, 1], out_gain=1.0, rng=rng)

    @property
    def params(self):
        return self.mu.params + [self.log_std] + self.value.params

    def log_prob(self, mu, actions):
        z = (actions - mu) / np.exp(self.log_std)
        return (
            -0.5 * np.sum(z**2, axis=-1)
            - np.sum(self.log_std)
            - 0.5 * len(self.log_std) * np.log(2 * np.pi)
        )

    def act(self, obs, rng):
        """Samples an action for one observation; returns it, its log-probability and V(obs)."""
        x = obs[None, :]
        mu = self.mu.forward(x)[0][0]
        action = mu + np.exp(self.log_std) * rng.standard_normal(mu.shape)
        return action, float(self.log_prob(mu, action)), float(self.value.forward(x)[0][0, 0])

    def state_value(self, obs):
        return float(self.value.forward(obs[None, :])[0][0, 0])


class Adam:
    """Adam (Kingma & Ba 2015) updating the parameter arrays in place."""

    def __init__(self, params, lr, betas=(0.9, 0.999), eps=1e-5):
        self.params, self.lr, self.betas, self.eps = params, lr, betas, eps
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.t = 0

    def step(self, grads):
        self.t += 1
        b1, b2 = self.betas
        scale = self.lr * np.sqrt(1 - b2**self.t) / (1 - b1**self.t)  # bias correction
        for p, g, m, v in zip(self.params, grads, self.m, self.v):
            m *= b1
            m += (1 - b1) * g
            v *= b2
            v += (1 - b2) * g * g
            p -= scale * m / (np.sqrt(v) + self.eps)


# --- PPO ---------------------------------------------------------------------------------------


class Rollout:
    """Plays the environment with the current policy; episodes carry over between iterations."""

    def __init__(self, env, seed):
        self.env = env
        self.low, self.high = env.action_space.low, env.action_space.high
        with rlscope.operation("simulation"):
            self.obs, _ = env.reset(seed=seed)
        self.episode_return = 0.0

    def collect(self, agent, normalize, n_steps, rng):
        """Returns the batch of n_steps transitions and the returns of the episodes that ended."""
        obs_size, act_size = len(self.obs), len(self.low)
        batch = {
            "raw_obs": np.zeros((n_steps, obs_size)),
            "obs": np.zeros((n_steps, obs_size)),
            "actions": np.zeros((n_steps, act_size)),
            "log_probs": np.zeros(n_steps),
            "values": np.zeros(n_steps),
            "rewards": np.zeros(n_steps),
            "next_values": np.zeros(n_steps),
            "terminated": np.zeros(n_steps, dtype=bool),
            "ended": np.zeros(n_steps, dtype=bool),
        }
        returns = []
        for t in range(n_steps):
            with rlscope.operation("inference"):
                obs = normalize(self.obs)
                action, log_prob, value = agent.act(obs, rng)
            with rlscope.operation("simulation"):
                next_obs, reward, terminated, truncated, _ = self.env.step(
                    np.clip(action, self.low, self.high)
                )
            self.episode_return += reward
            batch["raw_obs"][t] = self.obs
            batch["obs"][t] = obs
            batch["actions"][t] = action  # unclipped: the sample whose log-probability we have
            batch["log_probs"][t] = log_prob
            batch["values"][t] = value
            batch["rewards"][t] = reward
            batch["terminated"][t] = terminated
            batch["ended"][t] = terminated or truncated
            if truncated and not terminated:
                # Cut off by the time limit, not by failure: bootstrap from the state it reached.
                with rlscope.operation("inference"):
                    batch["next_values"][t] = agent.state_value(normalize(next_obs))
            if terminated or truncated:
                returns.append(self.episode_return)
                self.episode_return = 0.0
                with rlscope.operation("simulation"):
                    next_obs, _ = self.env.reset()
            self.obs = next_obs
        # V(s_t+1): the next step's value within an episode, the bootstrap above at a time limit
        # (unused after a termination), and for the last step the state the next batch starts from.
        batch["next_values"][:-1] = np.where(
            batch["ended"][:-1], batch["next_values"][:-1], batch["values"][1:]
        )
        if not batch["ended"][-1]:
            with rlscope.operation("inference"):
                batch["next_values"][-1] = agent.state_value(normalize(self.obs))
        return batch, returns


def advantages(batch):
    """GAE(gamma, lambda) advantages and the value targets (advantage + value)."""
    rewards, values, next_values = batch["rewards"], batch["values"], batch["next_values"]
    not_terminated, not_ended = ~batch["terminated"], ~batch["ended"]
    adv = np.zeros_like(rewards)
    running = 0.0
    for t in reversed(range(len(rewards))):
        delta = rewards[t] + GAMMA * next_values[t] * not_terminated[t] - values[t]
        running = delta + GAMMA * GAE_LAMBDA * not_ended[t] * running
        adv[t] = running
    return adv, adv + values


def loss_and_grads(agent, obs, actions, old_log_probs, adv, targets):
    """The PPO loss on a minibatch and its gradients, in the order of agent.params."""
    n = len(obs)
    mu, mu_inputs = agent.mu.forward(obs)
    ratio = np.exp(agent.log_prob(mu, actions) - old_log_probs)
    surrogate = ratio * adv
    clipped = np.clip(ratio, 1 - CLIP, 1 + CLIP) * adv
    policy_loss = -np.mean(np.minimum(surrogate, clipped))
    # d policy_loss / d log_prob: the clipped term is constant wherever the minimum picks it.
    d_log_prob = np.where(surrogate <= clipped, -surrogate / n, 0.0)
    std = np.exp(agent.log_std)
    z = (actions - mu) / std
    d_mu = d_log_prob[:, None] * z / std
    d_log_std = np.sum(d_log_prob[:, None] * (z**2 - 1.0), axis=0)

    values, value_inputs = agent.value.forward(obs)
    error = values[:, 0] - targets
    value_loss = 0.5 * np.mean(error**2)
    d_values = (VALUE_COEF * error / n)[:, None]

    grads = (
        agent.mu.backward(mu_inputs, d_mu)
        + [d_log_std]
        + agent.value.backward(value_inputs, d_values)
    )
    return policy_loss, value_loss, grads


def update(agent, optimizer, batch, epochs, minibatch, rng):
    """PPO's epochs of minibatch Adam steps; returns the mean policy and value losses."""
    adv, targets = advantages(batch)
    n = len(adv)
    policy_losses, value_losses = [], []
    for _ in range(epochs):
        order = rng.permutation(n)
        for start in range(0, n, minibatch):
            idx = order[start : start + minibatch]
            mb_adv = (adv[idx] - adv[idx].mean()) / (adv[idx].std() + 1e-8)
            policy_loss, value_loss, grads = loss_and_grads(
                agent,
                batch["obs"][idx],
                batch["actions"][idx],
                batch["log_probs"][idx],
                mb_adv,
                targets[idx],
            )
            norm = np.sqrt(sum(np.sum(g * g) for g in grads))
            if norm > MAX_GRAD_NORM:
                grads = [g * (MAX_GRAD_NORM / norm) for g in grads]
            optimizer.step(grads)
            policy_losses.append(policy_loss)
            value_losses.append(value_loss)
    return float(np.mean(policy_losses)), float(np.mean(value_losses))


# --- Main --------------------------------------------------------------------------------------


def positive_int(text):
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {text}")
    return value


def parse_args():
    parser = argparse.ArgumentParser(
        description="PPO with a small numpy MLP policy on MuJoCo Hopper/Walker2d or a numpy\n"
        "reacher, annotated for rlscope (operations inference, simulation, backpropagation).",
        epilog="examples:\n"
        "  python3 ppo.py --env numpy --iterations 30\n"
        "  rlscope-prof -o ppo.sqlite -- python3 ppo.py --iterations 3",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--iterations",
        type=positive_int,
        default=10,
        metavar="N",
        help="collect-then-update iterations (default: 10)",
    )
    parser.add_argument(
        "--steps-per-iteration",
        type=positive_int,
        default=1024,
        metavar="N",
        help="environment steps collected per iteration (default: 1024)",
    )
    parser.add_argument(
        "--epochs",
        type=positive_int,
        default=10,
        metavar="N",
        help="passes over each batch in the update (default: 10)",
    )
    parser.add_argument(
        "--minibatch",
        type=positive_int,
        default=64,
        metavar="N",
        help="transitions per gradient step (default: 64)",
    )
    parser.add_argument(
        "--hidden",
        type=positive_int,
        default=64,
        metavar="N",
        help="units in each of the two hidden layers (default: 64)",
    )
    parser.add_argument(
        "--env",
        choices=["auto", "hopper", "walker2d", "numpy"],
        default="auto",
        help="hopper, walker2d: gymnasium's MuJoCo Hopper or Walker2d (v5, else v4); numpy: "
        "the two-link reacher of numpy_env.py; auto (default): hopper when gymnasium's MuJoCo "
        "environments load, else numpy",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seeds the networks, the sampling and the environment (default: 0)",
    )
    parser.add_argument("--quiet", action="store_true", help="print only the final summary line")
    return parser.parse_args()


def main():
    args = parse_args()
    if not ANNOTATIONS:
        print("ppo.py: rlscope package not found, annotations are off", file=sys.stderr)
    env, env_name = make_env(args.env)
    rng = np.random.default_rng(args.seed)
    obs_size, act_size = env.observation_space.shape[0], env.action_space.shape[0]
    agent = Agent(obs_size, act_size, args.hidden, rng)
    optimizer = Adam(agent.params, LEARNING_RATE)
    normalize = ObsNormalizer(obs_size)
    if not args.quiet:
        print(
            f"ppo: env={env_name} ({obs_size} observations, {act_size} actions), seed {args.seed}"
        )

    start = time.perf_counter()
    rlscope.set_phase("training")
    rollout = Rollout(env, args.seed)
    for i in range(args.iterations):
        with rlscope.operation("training_loop"):
            batch, returns = rollout.collect(agent, normalize, args.steps_per_iteration, rng)
            normalize.update(batch["raw_obs"])
            with rlscope.operation("backpropagation"):
                policy_loss, value_loss = update(
                    agent, optimizer, batch, args.epochs, args.minibatch, rng
                )
        mean_return = float(np.mean(returns)) if returns else float("nan")
        rlscope.report_progress(i + 1, args.iterations)
        if not args.quiet:
            print(
                f"iteration {i + 1:3d}/{args.iterations}"
                f"  mean return {mean_return:9.2f} ({len(returns)} episodes)"
                f"  policy loss {policy_loss:8.4f}  value loss {value_loss:10.4f}",
                flush=True,
            )
    elapsed = time.perf_counter() - start
    env.close()
    steps = args.iterations * args.steps_per_iteration
    print(
        f"ppo: {args.iterations} iterations, {steps} env steps, env={env_name}, "
        f"final mean return {mean_return:.2f}, {elapsed:.2f} s"
    )


if __name__ == "__main__":
    main()
