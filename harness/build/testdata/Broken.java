public class Broken {
    void f( }
}
