"""A two-link planar reacher simulated in numpy: the stand-in simulator when MuJoCo is absent.

The arm lies in a horizontal plane (no gravity); two uniform rods joined by hinges, each joint
driven by a torque and slowed by viscous damping. Its motion follows the manipulator equation

    M(q) q'' + c(q, q') + b q' = tau,

(Spong, Hutchinson & Vidyasagar, "Robot Modeling and Control", ch. 7) integrated with
semi-implicit Euler in small substeps, the way MuJoCo's Reacher task repeats its physics step
`frame_skip` times per action. Each episode places a target at random within reach; the reward is
minus the fingertip's distance to it, minus a small cost on the torques.

The API follows gymnasium's (reset(seed=) -> (obs, info); step(action) -> (obs, reward,
terminated, truncated, info)) without depending on it.
"""

import numpy as np


class Box:
    """The subset of gymnasium.spaces.Box the PPO sample reads: shape, low, high."""

    def __init__(self, low, high, shape):
        self.shape = shape
        self.low = np.full(shape, low, dtype=np.float64)
        self.high = np.full(shape, high, dtype=np.float64)


class ReacherEnv:
    """Reach a random target with the fingertip of a two-link arm.

    Observation (10): cos q1, cos q2, sin q1, sin q2, q1', q2', target x, y, fingertip - target.
    Action (2): joint torques as a fraction of the maximum, in [-1, 1].
    An episode is truncated after `max_steps` steps; it never terminates early.
    """

    # Links: length (m), mass (kg); uniform rods, so centre of mass at half length.
    LENGTH = (0.5, 0.5)
    MASS = (1.0, 1.0)
    MAX_TORQUE = 2.0  # N m at |action| = 1
    DAMPING = 0.5  # N m s / rad, both joints
    DT = 0.05  # s per action
    SUBSTEPS = 5  # physics steps of 10 ms per action, as MuJoCo's Reacher takes 2
    CTRL_COST = 0.1

    def __init__(self, max_steps=50):
        self.max_steps = max_steps
        self.observation_space = Box(-np.inf, np.inf, (10,))
        self.action_space = Box(-1.0, 1.0, (2,))
        self._rng = np.random.default_rng()
        self._q = np.zeros(2)
        self._qd = np.zeros(2)
        self._target = np.zeros(2)
        self._steps = 0

    def reset(self, seed=None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._q = self._rng.uniform(-np.pi, np.pi, size=2)
        self._qd = self._rng.uniform(-0.1, 0.1, size=2)
        # Uniform over the reachable annulus, away from the base and the fully stretched arm.
        reach = sum(self.LENGTH)
        radius = np.sqrt(self._rng.uniform(0.2**2, (0.9 * reach) ** 2))
        angle = self._rng.uniform(-np.pi, np.pi)
        self._target = radius * np.array([np.cos(angle), np.sin(angle)])
        self._steps = 0
        return self._observation(), {}

    def step(self, action):
        torque = self.MAX_TORQUE * np.clip(np.asarray(action, dtype=np.float64), -1.0, 1.0)
        h = self.DT / self.SUBSTEPS
        for _ in range(self.SUBSTEPS):
            qdd = np.linalg.solve(self._mass_matrix(), torque - self._bias_forces())
            self._qd = self._qd + h * qdd
            self._q = self._q + h * self._qd
        self._steps += 1
        distance = float(np.linalg.norm(self._fingertip() - self._target))
        reward = -distance - self.CTRL_COST * float(np.sum(np.square(torque / self.MAX_TORQUE)))
        truncated = self._steps >= self.max_steps
        return self._observation(), reward, False, truncated, {"distance": distance}

    def close(self):
        pass

    def _mass_matrix(self):
        (l1, l2), (m1, m2) = self.LENGTH, self.MASS
        lc1, lc2 = l1 / 2, l2 / 2
        i1, i2 = m1 * l1**2 / 12, m2 * l2**2 / 12
        c2 = np.cos(self._q[1])
        m11 = m1 * lc1**2 + i1 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * c2) + i2
        m12 = m2 * (lc2**2 + l1 * lc2 * c2) + i2
        m22 = m2 * lc2**2 + i2
        return np.array([[m11, m12], [m12, m22]])

    def _bias_forces(self):
        """Coriolis and centrifugal terms c(q, q') plus joint damping b q'."""
        h = self.MASS[1] * self.LENGTH[0] * (self.LENGTH[1] / 2) * np.sin(self._q[1])
        qd1, qd2 = self._qd
        coriolis = np.array([-h * (2 * qd1 * qd2 + qd2**2), h * qd1**2])
        return coriolis + self.DAMPING * self._qd

    def _fingertip(self):
        q1, q12 = self._q[0], self._q[0] + self._q[1]
        l1, l2 = self.LENGTH
        return np.array([l1 * np.cos(q1) + l2 * np.cos(q12), l1 * np.sin(q1) + l2 * np.sin(q12)])

    def _observation(self):
        return np.concatenate(
            [
                np.cos(self._q),
                np.sin(self._q),
                self._qd,
                self._target,
                self._fingertip() - self._target,
            ]
        )
